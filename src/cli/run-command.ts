/**
 * `pulse run`: hosts the given loops with embedded defaults (in-memory substrates, handlers that
 * record what they were given) on their cadences, and prints a live trace of iterations, nested
 * loops and signals. The README's first command.
 */
import { Option, type Command } from "commander";
import { parseDuration } from "../grammar/duration.js";
import { DEFAULT_MAX_BYTES } from "../source/load.js";
import { validateSources } from "../validator/validate.js";
import { compactLine } from "../format/compact.js";
import { EXIT, UsageError } from "./exit-codes.js";
import type { CliIO } from "./io.js";
import { useColor } from "./io.js";
import { parseCount, readManifestSources } from "./inputs.js";
import { TraceWriter } from "./run-trace.js";
import { describeNatsNote, openNats, TRANSPORT_HELP } from "./run-nats.js";
import { FLEET_HELP, openFleet, type FleetRun } from "./run-fleet.js";

export interface RunCliOptions {
  once?: boolean;
  iterations?: string;
  duration?: string;
  stopTimeout?: string;
  json?: boolean;
  workspace?: string;
  kickoff?: boolean;
  event?: string[];
  listen?: string;
  httpMode?: "structured" | "binary";
  route?: string[];
  transport?: string;
  fleet?: string;
  leaseTtl?: string;
  hostId?: string;
  color?: boolean;
}

export const RUN_DESCRIPTION = "Run PULSE loops on their cadences, with in-memory substrates and recording handlers, printing a live trace.";

export const RUN_HELP = `
Operands: manifests, directories or globs, all hosted together (their connections and nested
loops reach each other in process).

Each loop iterates on its cadence (periodic, idle, event, streaming, cross_loop_signal, manual).
With --kickoff (the default) every loop also iterates once when the host starts, as a manual
trigger would, so each shipped loop shows what it does at once. Phase handlers are the embedded
recording handlers: they record their input and return what the phase kind calls for, computed
from the in-memory substrates.

Stopping: after --once (every loop once), --iterations N (once N iterations have been
triggered), --duration, or Ctrl-C; in-flight iterations and signals finish first, for up to
--stop-timeout (default 10s): a signal they send still runs its receiver's iteration (delivery
is at least once), and signals still undelivered then are dropped and reported. A second
Ctrl-C stops at once.

Two processes can signal each other over loopback:
  pulse run a.yaml --listen 7070 --route other.loop=http://127.0.0.1:7071
  pulse run b.yaml --listen 7071 --route first.loop=http://127.0.0.1:7070

${TRANSPORT_HELP.trim()}

${FLEET_HELP.trim()}

Exit codes: 0 ran cleanly; 1 an invalid manifest, or (with --once/--iterations) an iteration
that did not complete, or (with --once) a signal still undelivered at --stop-timeout; 2 usage
error; 3 internal error.`;

export function addRunOptions(cmd: Command): Command {
  return cmd
    .argument("[paths...]", "manifests, directories or globs")
    .option("--once", "run every loop once, deliver its signals, and stop")
    .option("--iterations <n>", "stop once n iterations in all have been triggered (kickoffs first)")
    .option("--duration <duration>", "stop after this long, e.g. 10s, 2m")
    .option("--stop-timeout <duration>", "when stopping, how long in-flight iterations and signals get to finish", "10s")
    .option("--json", "print host events as JSON lines instead of the trace")
    .option("-w, --workspace <id>", "workspace the loops run in", "default")
    .option("--no-kickoff", "do not run every loop once at start: wait for cadences only")
    .option("-e, --event <name[=json]>", "emit an event (for event cadences) when the host starts; repeatable", collect, [])
    .option("--listen <port>", "receive CloudEvents signals over HTTP on this loopback port")
    .option("--route <loop=url>", "send signals for loop to another host over HTTP; repeatable", collect, [])
    .option("--transport <url>", "send and take signals through NATS JetStream: nats://host:4222[?system=name]")
    .option("--fleet <url>", "share the loops with other pulse runs: leases in PostgreSQL, postgres://…[?schema=name] (needs --transport)")
    .option("--lease-ttl <duration>", "with --fleet: how long a host's lease on a loop lasts unless renewed", "15s")
    .option("--host-id <name>", "with --fleet: this host's name in the fleet (default hostname:pid)")
    .addOption(new Option("--http-mode <mode>", "CloudEvents HTTP content mode of --route signals").choices(["structured", "binary"]).default("structured"))
    .option("--color", "force colour")
    .option("--no-color", "disable colour");
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

function parseEvents(values: readonly string[]): { name: string; payload: unknown }[] {
  return values.map((v) => {
    const eq = v.indexOf("=");
    if (eq < 0) return { name: v, payload: {} };
    const name = v.slice(0, eq);
    try {
      return { name, payload: JSON.parse(v.slice(eq + 1)) };
    } catch {
      throw new UsageError(`--event ${name}: the payload after = must be JSON, e.g. --event ${name}='{"query":"hi"}'`);
    }
  });
}

function parseRoutes(values: readonly string[]): Record<string, string> {
  const routes: Record<string, string> = {};
  for (const v of values) {
    const m = /^([a-z0-9_]+(?:\.[a-z0-9_]+)+)=(https?:\/\/.+)$/.exec(v);
    if (!m) throw new UsageError(`--route takes loop_id=http://host:port, not "${v}"`);
    routes[m[1] as string] = m[2] as string;
  }
  return routes;
}

export async function runRun(operands: readonly string[], opts: RunCliOptions, io: CliIO, signals: { onStop: (stop: () => void) => void }): Promise<number> {
  const iterations = parseCount("--iterations", opts.iterations);
  if (iterations === 0) throw new UsageError("--iterations takes a positive number of iterations, not 0");
  if (opts.once && iterations !== undefined) throw new UsageError("--once runs every loop once: it cannot be combined with --iterations");
  if (opts.once && opts.duration !== undefined) throw new UsageError("--once stops when every loop ran once: it cannot be combined with --duration");
  if (opts.once && opts.kickoff === false) throw new UsageError("--once runs every loop once at start: it cannot be combined with --no-kickoff");
  let durationMs: number | undefined;
  if (opts.duration !== undefined) {
    const d = parseDuration(opts.duration);
    if (!d.ok) throw new UsageError(`--duration: ${d.error.message}`);
    durationMs = d.value;
  }
  const stopTimeout = parseDuration(opts.stopTimeout ?? "10s");
  if (!stopTimeout.ok) throw new UsageError(`--stop-timeout: ${stopTimeout.error.message}`);
  const port = opts.listen === undefined ? undefined : parseCount("--listen", opts.listen);
  if (port !== undefined && port > 65535) throw new UsageError(`--listen takes a port from 0 to 65535 (0: any free port), not ${port}`);
  const events = parseEvents(opts.event ?? []);
  const routes = parseRoutes(opts.route ?? []);
  if (opts.transport !== undefined && Object.keys(routes).length > 0) throw new UsageError("--transport reaches every loop of the system through NATS: it cannot be combined with --route");
  if (opts.fleet !== undefined && opts.transport === undefined) throw new UsageError("--fleet needs --transport nats://…: the hosts of a fleet signal each other's loops through NATS");
  if (opts.fleet !== undefined && opts.once) throw new UsageError("--once runs every loop once on this host: in a fleet each loop runs on one host; use --duration, or stop with Ctrl-C");

  const sources = await readManifestSources(operands, undefined, io, DEFAULT_MAX_BYTES);
  const results = validateSources(sources);
  const errors = results.flatMap((r) => r.diagnostics.filter((d) => d.severity === "error").map((d) => compactLine(r.file, d)));
  if (errors.length > 0) {
    io.stderr(`${errors.join("\n")}\npulse run: ${errors.length} error${errors.length === 1 ? "" : "s"}; fix the manifests (pulse validate shows the details)\n`);
    return EXIT.problems;
  }

  const { createHost, recordingHandler } = await import("../host/index.js");
  const transports = await import("../transports/http.js");
  let trace: TraceWriter | undefined;
  const leaseTtl = opts.fleet === undefined ? undefined : parseDuration(opts.leaseTtl ?? "15s");
  const nats = opts.transport === undefined ? undefined : await openNats(opts.transport, (n) => trace?.note(describeNatsNote(n)), leaseTtl?.ok ? leaseTtl.value : undefined);
  let fleet: FleetRun | undefined;
  if (opts.fleet !== undefined && nats) {
    try {
      fleet = await openFleet(opts.fleet, { workspace: opts.workspace ?? "default", leaseTtl: opts.leaseTtl, ...(opts.hostId ? { hostId: opts.hostId } : {}), nats, note: (m) => trace?.note(m) });
    } catch (error) {
      await nats.close();
      throw error;
    }
  }
  const transport = nats ?? (Object.keys(routes).length > 0 ? new transports.HttpTransport({ routes, mode: opts.httpMode ?? "structured" }) : undefined);
  let host: Awaited<ReturnType<typeof createHost>> | undefined;
  host = await createHost({
    workspace: opts.workspace ?? "default",
    ...(transport ? { transport } : {}),
    ...(fleet ? { fleet: fleet.fleet } : {}),
    defaultHandler: recordingHandler({
      emits: (loopId, phaseId) => (host?.loop(loopId)?.compiled.connections ?? []).filter((c) => c.connection.emit_phase === phaseId).map((c) => c.connection.token as never),
    }),
    onEscalation: () => undefined,
  });
  trace = new TraceWriter(io, { json: opts.json === true, color: useColor(io, opts.color) });
  host.subscribe((e) => trace.event(e));
  for (const source of sources) await host.load(source.value as Record<string, unknown>, { name: source.file });
  trace.loaded(host.loops);

  let server: { close(): Promise<void> } | undefined;
  if (port !== undefined) {
    const h = host;
    const signalServer = transports.createSignalServer((loopId, envelope) => h.receive(loopId, envelope));
    const { url } = await signalServer.listen(port, "127.0.0.1").catch((e: NodeJS.ErrnoException) => {
      const reason = e.code === "EADDRINUSE" ? "the port is already in use" : e.code === "EACCES" ? "permission denied" : (e.code ?? e.message);
      throw new UsageError(`--listen ${port}: cannot receive signals on 127.0.0.1:${port}: ${reason}`);
    });
    server = signalServer;
    trace.note(`receiving signals at ${url}`);
  }

  let stopRequested: () => void = () => undefined;
  const stopped = new Promise<void>((resolve) => (stopRequested = resolve));
  signals.onStop(() => stopRequested());
  // --iterations N: once the N-th iteration the run triggered has started, the host stops (it
  // and any other already running finish, with the iterations their signals start).
  let started = 0;
  let incomplete = 0;
  let stopping = false;
  host.subscribe((e) => {
    if (e.type === "iteration.started" && iterations !== undefined && !e.cause?.signal && ++started >= iterations) stopRequested();
    if (e.type === "iteration.finished" && e.status !== "completed") incomplete++;
  });

  host.start();
  if (fleet) {
    await fleet.start(host);
  } else if (nats) {
    await nats.serve(host);
    trace.note(`signals through NATS ${nats.address.display}, stream ${nats.stream}: taking those for ${host.loops.map((l) => l.id).join(", ")}`);
  }
  for (const e of events) {
    const ran = await host.emitEvent(e.name, e.payload, { workspace: opts.workspace ?? "default" });
    if (ran.length === 0) trace.note(`event "${e.name}": no loop iterated (none has an event cadence with this trigger, or its filter did not hold)`);
  }
  if (!fleet && (opts.once || opts.kickoff !== false)) {
    const kicked = iterations === undefined ? host.loops : host.loops.slice(0, iterations);
    const h = host;
    const kickoff = Promise.all(kicked.map((loop) => h.trigger(loop.id, { cause: { trigger: "kickoff" } }).catch((error: Error) => stopping || trace.note(`${loop.id}: ${error.message}`))));
    if (opts.once) void kickoff.then(() => h.settled()).then(() => stopRequested());
  }
  const timer = durationMs === undefined ? undefined : setTimeout(stopRequested, durationMs);
  await stopped;
  stopping = true;
  if (timer) clearTimeout(timer);
  trace.note("stopping: letting in-flight iterations and signals finish");
  const stop = await host.stop({ timeoutMs: stopTimeout.value });
  // After in-flight iterations finished: the leases go, and other hosts take over at once.
  await fleet?.stop();
  await server?.close();
  trace.summary(host.loops);
  if ((opts.once || iterations !== undefined) && incomplete > 0) return EXIT.problems;
  // --once promises its signals are delivered: one given up at the deadline is a problem.
  return opts.once && stop.signalsDropped > 0 ? EXIT.problems : EXIT.ok;
}
