/**
 * `pulse studio`: hosts the given loops as `pulse run` does (recording handlers, the store's
 * state, a kickoff iteration each) and serves the studio's page and API over them and over the
 * store's coding runs (sessions, through the same SessionApi as `pulse serve`).
 */
import { randomBytes } from "node:crypto";
import { DEFAULT_MAX_BYTES } from "../source/load.js";
import { validateSources } from "../validator/validate.js";
import { compactLine } from "../format/compact.js";
import { capturing, type Studio } from "../studio/studio.js";
import { EXIT, UsageError } from "./exit-codes.js";
import type { CliIO } from "./io.js";
import { readManifestSources } from "./inputs.js";
import { DEFAULT_STORE, openStoreForCli } from "./store-open.js";
import { openSessionRuns, serveStudio, studioStoreSpec } from "./studio-serve.js";
import { parseListenHost, parsePort, type StudioCliOptions } from "./studio-options.js";
import { openAgentStudio } from "./studio-agent.js";

export async function runStudio(operands: readonly string[], opts: StudioCliOptions, io: CliIO, signals: { onStop: (stop: () => void) => void }): Promise<number> {
  const port = parsePort(opts.port);
  const listen = parseListenHost(opts.host);
  let token = opts.token ?? (io.env.PULSE_TOKEN || undefined);
  if (token !== undefined && token.length < 16) throw new UsageError("--token (or PULSE_TOKEN) must be at least 16 characters, e.g. $(openssl rand -hex 32)");
  const madeUp = token === undefined && !listen.loopback;
  if (madeUp) token = randomBytes(24).toString("hex");

  const sources = operands.length === 0 ? [] : await readManifestSources(operands, undefined, io, DEFAULT_MAX_BYTES);
  const results = validateSources(sources);
  const errors = results.flatMap((r) => r.diagnostics.filter((d) => d.severity === "error").map((d) => compactLine(r.file, d)));
  if (errors.length > 0) {
    io.stderr(`${errors.join("\n")}\npulse studio: ${errors.length} error${errors.length === 1 ? "" : "s"}; fix the manifests (pulse validate shows the details)\n`);
    return EXIT.problems;
  }

  const chosen = studioStoreSpec(opts.store ?? (io.env.PULSE_STORE || undefined));
  const store = await openStoreForCli(chosen ?? DEFAULT_STORE, io, "pulse studio", { memoryWithoutDriver: chosen === undefined, flag: opts.store !== undefined ? "--store" : "PULSE_STORE" });
  if (!store) return EXIT.problems;
  const sessions = await openSessionRuns(chosen, opts.profile, io, "pulse studio").catch(async (e: unknown) => {
    await store.close();
    throw e;
  });
  try {
    const { createHost, recordingHandler } = await import("../host/index.js");
    let studio: Studio | undefined;
    const recording = recordingHandler({ emits: (loopId, phaseId) => (host.loop(loopId)?.compiled.connections ?? []).filter((c) => c.connection.emit_phase === phaseId).map((c) => c.connection.token as never) });
    const host = await createHost({ workspace: opts.workspace ?? "default", store, defaultHandler: capturing(recording, () => studio), onEscalation: () => undefined });
    for (const source of sources) {
      try {
        await host.load(source.value as Record<string, unknown>, { name: source.file });
      } catch (error) {
        io.stderr(`pulse studio: ${source.file}: ${(error as Error).message}\n`);
        await host.stop({ timeoutMs: 0 });
        return EXIT.problems;
      }
    }
    const agent = openAgentStudio(opts, io);
    const served = await serveStudio(host, store, sources, sessions.runs, { agent, port, host: listen.host, ...(token !== undefined ? { token } : {}), allowHosts: opts.allowHost ?? [], allowOrigins: opts.allowOrigin ?? [], flag: "--port" });
    studio = served.studio;
    io.stdout(`pulse studio at ${served.url} (${host.loops.length} loop${host.loops.length === 1 ? "" : "s"}; ${token !== undefined ? `bearer token ${madeUp ? "made up for this run" : "required"}: ${token}; ` : ""}Ctrl-C stops)\n`);

    host.start();
    if (opts.kickoff !== false) for (const loop of host.loops) void host.trigger(loop.id, { cause: { trigger: "kickoff" } }).catch((e: Error) => io.stderr(`pulse studio: ${loop.id}: ${e.message}\n`));
    const keepAlive = setInterval(() => undefined, 1 << 30);
    await new Promise<void>((resolve) => signals.onStop(resolve));
    clearInterval(keepAlive);
    io.stdout("stopping: in-flight iterations finish; sessions running here pause\n");
    await served.server.close();
    await agent.close();
    await sessions.close();
    await host.stop({ timeoutMs: 10_000 });
    served.studio.close();
    return EXIT.ok;
  } finally {
    await sessions.close();
    await store.close();
  }
}
