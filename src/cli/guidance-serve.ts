/**
 * `pulse guidance serve`: the watcher and the MCP server in one process, as the seed's `pulse
 * start` (creating .pulse/ first if it is missing). HTTP on loopback by default; any other
 * address needs a bearer token. Stops on SIGINT or SIGTERM (HTTP), or when stdin ends (--stdio).
 * With --signal-to URL --session ID, each plan-invalidating change is also sent to that session of
 * `pulse serve` as a SurpriseSignal (the manifest's replan_to_session connection).
 */
import { serveStdio } from "../serve/stdio.js";
import { isLoopback } from "../transports/loopback.js";
import type { GuidanceSidecar } from "../coding/guidance/sidecar.js";
import { watchGuidance } from "../coding/guidance/watcher.js";
import { createGuidanceMcpServer } from "../serve/guidance-mcp.js";
import { startGuidanceHttp } from "../serve/guidance-http.js";
import { EXIT, UsageError } from "./exit-codes.js";
import type { CliIO } from "./io.js";
import { parseCount } from "./guidance-options.js";
import { SIGNAL_TOKEN_ENV, signalQueue, signalTarget, surpriseOfScan, type SignalTarget } from "../coding/guidance/signal-sender.js";

export const DEFAULT_GUIDANCE_PORT = 8765;

export interface GuidanceServeOptions {
  port?: string;
  host?: string;
  token?: string;
  stdio?: boolean;
  debounce?: string;
  allowHost?: string[];
  allowOrigin?: string[];
  signalTo?: string;
  session?: string;
  workflow?: string;
}

export async function serveGuidance(sidecar: GuidanceSidecar, opts: GuidanceServeOptions, io: CliIO): Promise<number> {
  const port = parseCount("--port", opts.port, 0, 65535) ?? DEFAULT_GUIDANCE_PORT;
  const debounceMs = parseCount("--debounce", opts.debounce, 0, 60_000);
  const host = opts.host ?? "127.0.0.1";
  const token = opts.token ?? (io.env.PULSE_TOKEN || undefined);
  if (opts.stdio && (opts.port !== undefined || opts.host !== undefined || opts.token !== undefined)) throw new UsageError("--stdio serves on standard input and output: --port, --host and --token do not apply");
  if (token !== undefined && token.length < 16) throw new UsageError("--token (or PULSE_TOKEN) must be at least 16 characters, e.g. $(openssl rand -hex 32)");
  if (!opts.stdio && !isLoopback(host) && token === undefined) throw new UsageError(`--host ${host} serves the sidecar to other machines: give it a --token (or PULSE_TOKEN), which clients must send`);
  if (opts.session !== undefined && opts.signalTo === undefined) throw new UsageError("--session names the session --signal-to steers: give --signal-to URL too");
  if (opts.workflow !== undefined && opts.signalTo === undefined) throw new UsageError("--workflow names the workflow --signal-to steers: give --signal-to URL too");
  let target: SignalTarget | undefined;
  try {
    target = opts.signalTo === undefined ? undefined : signalTarget(opts.signalTo, { session: opts.session, workflow: opts.workflow }, io.env[SIGNAL_TOKEN_ENV] || undefined);
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  // Standard output is the protocol's under --stdio: everything else goes to standard error.
  const say = opts.stdio ? io.stderr : io.stdout;
  const init = sidecar.init();
  if (init.created.length) say(`${init.dir}: created ${init.created.join(", ")}\n`);
  const signals = target ? signalQueue(target, say) : undefined;
  const watcher = watchGuidance(sidecar, {
    ...(debounceMs !== undefined ? { debounceMs } : {}),
    onScan: (r) => {
      for (const e of r.events) say(`${e.id} ${e.kind} ${e.path}${r.interrupt.needs_replan && r.interrupt.pending_replan_event_id === e.id ? "  (replan pending)" : ""}\n`);
      if (!signals || !target) return;
      try {
        const envelope = surpriseOfScan(r, sidecar.events(), sidecar.paths.root, sidecar.paths.dir, target.id);
        if (envelope) signals.push(envelope);
      } catch (e) {
        io.stderr(`pulse guidance: the signal could not be built: ${(e as Error).message}\n`);
      }
    },
    onError: (e) => io.stderr(`pulse guidance: scan failed: ${e.message}\n`),
  });
  try {
    if (opts.stdio) {
      const server = createGuidanceMcpServer(sidecar);
      await serveStdio(server);
      await server.close();
      return EXIT.ok;
    }
    const http = await startGuidanceHttp(sidecar, { host, port, ...(token !== undefined ? { token } : {}), allowHosts: opts.allowHost ?? [], allowOrigins: opts.allowOrigin ?? [] }).catch((e: NodeJS.ErrnoException) => {
      if (e.code === "EADDRINUSE") throw new UsageError(`--port ${port}: port ${port} on ${host} is already in use (try --port 0 for a free one)`);
      if (e.code === "EADDRNOTAVAIL") throw new UsageError(`--host ${host} is not an address of this machine`);
      throw e instanceof TypeError ? new UsageError(e.message) : e;
    });
    say(`watching ${sidecar.paths.dir}; MCP at ${http.url}${token !== undefined ? " (bearer token required)" : ""}${target ? `; plan-invalidating changes signalled to ${target.endpoint}` : ""}; Ctrl-C stops\n`);
    await new Promise<void>((resolve) => ["SIGINT", "SIGTERM"].forEach((s) => process.once(s, () => resolve())));
    await http.close();
    // A signal still retrying is given a bounded last chance, not abandoned silently.
    if (signals) await Promise.race([signals.settled(), new Promise((r) => setTimeout(r, 5_000).unref())]);
    return EXIT.ok;
  } finally {
    await watcher.close();
  }
}
