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
import { parseHost } from "../transports/listener-guard.js";
import { EXIT, UsageError } from "./exit-codes.js";
import type { CliIO } from "./io.js";
import { useColor } from "./io.js";
import { parseCount, readManifestSources } from "./inputs.js";
import { TraceWriter } from "./run-trace.js";
import { describeNatsNote, openNats, TRANSPORT_HELP } from "./run-nats.js";
import { FLEET_HELP, openFleet, type FleetRun } from "./run-fleet.js";
import { describeWaits, QuietWatcher } from "./run-waiting.js";
import { isLoopback as isLoopbackHost } from "../transports/loopback.js";
import { DEFAULT_STORE, openStoreForCli } from "./store-open.js";
import type { Store } from "../store/contracts.js";
import { STORE_RETRY_MS } from "../host/store-failure.js";

/** Exit codes of `pulse run` beyond the shared ones (EXIT). */
export const RUN_EXIT = {
  /** --iterations N: fewer than N could start, and nothing could trigger another. */
  starved: 4,
} as const;

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
  allowHost?: string[];
  allowOrigin?: string[];
  token?: string;
  maxSignalBytes?: string;
  httpMode?: "structured" | "binary";
  route?: string[];
  transport?: string;
  fleet?: string;
  leaseTtl?: string;
  hostId?: string;
  store?: string;
  color?: boolean;
  studio?: string | true;
}

export const RUN_DESCRIPTION = "Run PULSE loops on their cadences, with recording handlers and a durable store, printing a live trace.";

export const RUN_HELP = `
Operands: manifests, directories or globs, all hosted together (their connections and nested
loops reach each other in process).

Each loop iterates on its cadence (periodic, idle, event, streaming, cross_loop_signal, manual).
With --kickoff (the default) every loop also iterates once when the host starts, as a manual
trigger would, so each shipped loop shows what it does at once. Phase handlers are the embedded
recording handlers: they record their input and return what the phase kind calls for, computed
from the in-memory substrates.

Periodic cadences first fire one interval after start (or after phase_offset when the manifest
sets one); idle cadences after min_idle_ms without an iteration in the host.

--iterations N counts every iteration the run starts, whatever starts it: kickoffs (in load
order), cadences, events and received signals alike; an inner loop's iterations run inside the
outer iteration that waits for them and are not counted. Once N have started, nothing new
starts: a signal arriving after that is rejected (and reported as dropped).

When nothing is running, pulse run says what each loop waits for and when its next trigger is
due (if that is at least 5s away). When nothing can ever trigger another iteration (loops that
wait only for events, manual triggers, or signals from loops not in this run, without --listen),
it stops at once and says so.

Stopping: after --once (every loop once), --iterations N (once the N-th iteration has started),
--duration, when nothing can trigger another iteration, or on Ctrl-C; in-flight iterations and
signals finish first, for up to --stop-timeout (default 10s), and signals still undelivered then
are dropped and reported. A second Ctrl-C stops at once. The run ends with a summary (with
--json, a "run.summary" record).

State is kept in a store, .pulse/pulse.db in the working directory unless --store says otherwise:
the iteration journal, the audit trail, the memory graphs and idempotency records. A second run
continues where the first stopped (iteration numbers, memory, replays), and an iteration a crash
interrupted is resumed at the phase after its last committed one ("resumed <loop> #N at <phase>").
--store memory: keeps nothing after the run. Inspect a store with pulse audit and pulse store info.

Two processes can signal each other over loopback:
  pulse run a.yaml --listen 7070 --route other.loop=http://127.0.0.1:7071
  pulse run b.yaml --listen 7071 --route first.loop=http://127.0.0.1:7070

${TRANSPORT_HELP.trim()}

${FLEET_HELP.trim()}

Exit codes: 0 ran cleanly; 1 an invalid manifest, or (with --once/--iterations) an iteration
that did not complete, or (with --once) a signal still undelivered at --stop-timeout; 2 usage
error; 3 internal error; 4 (with --iterations N) fewer than N iterations could start and nothing
could trigger another.`;

export function addRunOptions(cmd: Command): Command {
  return cmd
    .argument("[paths...]", "manifests, directories or globs")
    .option("--once", "run every loop once, deliver its signals, and stop")
    .option("--iterations <n>", "stop once n iterations in all have started (kickoffs, cadences, events and signals alike; inner loops not counted)")
    .option("--duration <duration>", "stop after this long, e.g. 10s, 2m")
    .option("--stop-timeout <duration>", "when stopping, how long in-flight iterations and signals get to finish", "10s")
    .option("--json", "print host events as JSON lines instead of the trace")
    .option("-w, --workspace <id>", "workspace the loops run in", "default")
    .option("--no-kickoff", "do not run every loop once at start: wait for cadences only")
    .option("-e, --event <name[=json]>", "emit an event (for event cadences) when the host starts; repeatable", collect, [])
    .option("--listen <[host:]port>", "receive CloudEvents signals over HTTP on this port (127.0.0.1 unless a host is given; any other host needs --token)")
    .option("--token <token>", "shared secret of --listen (required from senders as a bearer token) and of --route (sent); default $PULSE_TOKEN")
    .option("--allow-host <name>", "--listen also accepts requests addressed to this host name (name or name:port; repeatable)", (v: string, p: string[] = []) => [...p, v])
    .option("--allow-origin <origin>", "--listen also accepts requests from web pages of this origin (repeatable)", (v: string, p: string[] = []) => [...p, v])
    .option("--max-signal-bytes <n>", "largest signal --listen takes (default 1048576); larger ones are refused with 413")
    .option("--route <loop=url>", "send signals for loop to another host over HTTP; repeatable", collect, [])
    .option("--transport <url>", "send and take signals through NATS JetStream: nats://host:4222[?system=name]")
    .option("--fleet <url>", "share the loops with other pulse runs: leases in PostgreSQL, postgres://…[?schema=name] (needs --transport)")
    .option("--lease-ttl <duration>", "with --fleet: how long a host's lease on a loop lasts unless renewed", "15s")
    .option("--host-id <name>", "with --fleet: this host's name in the fleet (default hostname:pid)")
    .option("--store <spec>", `where state is kept: sqlite:PATH, postgres://…?schema=name (a fleet's shared store), or memory: for nothing after the run (default: $PULSE_STORE, else ${DEFAULT_STORE})`)
    .addOption(new Option("--http-mode <mode>", "CloudEvents HTTP content mode of --route signals").choices(["structured", "binary"]).default("structured"))
    .option("--studio [port]", "also serve pulse studio, the web app to watch and steer the run, on 127.0.0.1 (default port 7400; see docs/studio.md)")
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

/** `--listen 7070`, `--listen 0.0.0.0:7070`, `--listen [::1]:7070`. */
export function parseListen(value: string): { host: string; port: number; loopback: boolean } {
  const m = /^(?:(\[[0-9a-fA-F:.]+\]|[^:[\]]+):)?(\d+)$/.exec(value.trim());
  if (!m) throw new UsageError(`--listen takes [host:]port, e.g. 7070 or 0.0.0.0:7070, not "${value}"`);
  const port = Number(m[2]);
  if (port > 65535) throw new UsageError(`--listen takes a port from 0 to 65535 (0: any free port), not ${port}`);
  const host = m[1] === undefined ? "127.0.0.1" : m[1].replace(/^\[|\]$/g, "");
  return { host, port, loopback: isLoopbackHost(host) };
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

/** Why a run stopped: the --json summary record and the last trace line say it. */
type StopReason = "once" | "iterations" | "duration" | "interrupted" | "starved" | "store";

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
  const listen = opts.listen === undefined ? undefined : parseListen(opts.listen);
  const port = listen?.port;
  const token = opts.token ?? (io.env.PULSE_TOKEN || undefined);
  if (token !== undefined && token.length < 16) throw new UsageError("--token (or PULSE_TOKEN) must be at least 16 characters, e.g. $(openssl rand -hex 32)");
  if (listen && !listen.loopback && token === undefined) {
    throw new UsageError(`--listen ${opts.listen} receives signals from beyond this machine: give it a --token (or PULSE_TOKEN), which senders must present`);
  }
  const maxSignalBytes = parseCount("--max-signal-bytes", opts.maxSignalBytes);
  if (maxSignalBytes !== undefined && opts.listen === undefined) throw new UsageError("--max-signal-bytes bounds what --listen takes: it needs --listen");
  for (const [flag, values] of [["--allow-host", opts.allowHost], ["--allow-origin", opts.allowOrigin]] as const) {
    if (values?.length && opts.listen === undefined) throw new UsageError(`${flag} widens what --listen accepts: it needs --listen`);
  }
  for (const h of opts.allowHost ?? []) if (!parseHost(h)) throw new UsageError(`--allow-host takes a host name (name or name:port), not ${JSON.stringify(h)}`);
  const events = parseEvents(opts.event ?? []);
  const routes = parseRoutes(opts.route ?? []);
  if (opts.transport !== undefined && Object.keys(routes).length > 0) throw new UsageError("--transport reaches every loop of the system through NATS: it cannot be combined with --route");
  if (opts.transport !== undefined && iterations !== undefined) throw new UsageError("--iterations cannot be combined with --transport: signals arriving after the N-th iteration would be refused for good instead of waiting in NATS for another run; use --duration or --once");
  if (opts.fleet !== undefined && opts.transport === undefined) throw new UsageError("--fleet needs --transport nats://…: the hosts of a fleet signal each other's loops through NATS");
  if (opts.fleet !== undefined && opts.once) throw new UsageError("--once runs every loop once on this host: in a fleet each loop runs on one host; use --duration, or stop with Ctrl-C");
  const workspace = opts.workspace ?? "default";

  const sources = await readManifestSources(operands, undefined, io, DEFAULT_MAX_BYTES);
  const results = validateSources(sources);
  const errors = results.flatMap((r) => r.diagnostics.filter((d) => d.severity === "error").map((d) => compactLine(r.file, d)));
  if (errors.length > 0) {
    io.stderr(`${errors.join("\n")}\npulse run: ${errors.length} error${errors.length === 1 ? "" : "s"}; fix the manifests (pulse validate shows the details)\n`);
    return EXIT.problems;
  }

  const chosen = opts.store ?? (io.env.PULSE_STORE || undefined);
  const store = await openStoreForCli(chosen ?? DEFAULT_STORE, io, "pulse run", { memoryWithoutDriver: chosen === undefined, flag: opts.store !== undefined ? "--store" : "PULSE_STORE" });
  if (!store) return EXIT.problems;
  try {
    return await runHosted(sources, opts, io, signals, { iterations, durationMs, stopTimeoutMs: stopTimeout.value, listen, token, maxSignalBytes, events, routes, workspace, store });
  } finally {
    await store.close();
  }
}

interface RunSettings {
  iterations: number | undefined;
  durationMs: number | undefined;
  stopTimeoutMs: number;
  listen: { host: string; port: number; loopback: boolean } | undefined;
  token: string | undefined;
  maxSignalBytes: number | undefined;
  events: { name: string; payload: unknown }[];
  routes: Record<string, string>;
  workspace: string;
  store: Store;
}

async function runHosted(sources: Awaited<ReturnType<typeof readManifestSources>>, opts: RunCliOptions, io: CliIO, signals: { onStop: (stop: () => void) => void }, settings: RunSettings): Promise<number> {
  const { iterations, durationMs, listen, token, maxSignalBytes, events, routes, workspace, store } = settings;
  const port = listen?.port;
  const { createHost, recordingHandler } = await import("../host/index.js");
  const transports = await import("../transports/http.js");
  // Notes from NATS and the fleet reach the trace once it exists.
  let note: (message: string, at?: number) => void = () => undefined;
  const leaseTtl = opts.fleet === undefined ? undefined : parseDuration(opts.leaseTtl ?? "15s");
  const nats = opts.transport === undefined ? undefined : await openNats(opts.transport, (n) => note(describeNatsNote(n)), leaseTtl?.ok ? leaseTtl.value : undefined, (m, at) => note(m, at));
  let fleet: FleetRun | undefined;
  if (opts.fleet !== undefined && nats) {
    try {
      fleet = await openFleet(opts.fleet, { workspace, leaseTtl: opts.leaseTtl, ...(opts.hostId ? { hostId: opts.hostId } : {}), nats, note: (m) => note(m), store });
    } catch (error) {
      await nats.close();
      throw error;
    }
  }
  const transport = nats ?? (Object.keys(routes).length > 0 ? new transports.HttpTransport({ routes, mode: opts.httpMode ?? "structured", ...(token !== undefined ? { token } : {}) }) : undefined);
  let host: Awaited<ReturnType<typeof createHost>> | undefined;
  // --studio: phases' inputs and outputs kept for its trace view, once it exists.
  let studio: import("../studio/studio.js").Studio | undefined;
  const capture = opts.studio === undefined ? undefined : (await import("../studio/studio.js")).capturing;
  host = await createHost({
    workspace,
    store,
    ...(transport ? { transport } : {}),
    ...(iterations !== undefined ? { maxIterations: iterations } : {}),
    ...(fleet ? { fleet: fleet.fleet } : {}),
    defaultHandler: ((recording) => (capture ? capture(recording, () => studio) : recording))(
      recordingHandler({ emits: (loopId, phaseId) => (host?.loop(loopId)?.compiled.connections ?? []).filter((c) => c.connection.emit_phase === phaseId).map((c) => c.connection.token as never) }),
    ),
    onEscalation: () => undefined,
  });
  const h = host;
  const trace = new TraceWriter(io, { json: opts.json === true, color: useColor(io, opts.color) });
  note = (message, at) => trace.note(message, at);
  h.subscribe((e) => trace.event(e));
  for (const source of sources) {
    try {
      await h.load(source.value as Record<string, unknown>, { name: source.file });
    } catch (error) {
      // A valid manifest the host cannot bind (a substrate URI no adapter serves): said in one line.
      io.stderr(`pulse run: ${source.file}: ${(error as Error).message}\n`);
      await h.stop({ timeoutMs: 0 });
      await fleet?.stop();
      return EXIT.problems;
    }
  }
  trace.loaded(h.loops);

  let server: { close(): Promise<void> } | undefined;
  if (listen) {
    const signalServer = transports.createSignalServer((loopId, envelope) => h.receive(loopId, envelope), { ...(token !== undefined ? { token } : {}), ...(maxSignalBytes !== undefined ? { maxBodyBytes: maxSignalBytes } : {}), allowHosts: opts.allowHost ?? [], allowOrigins: opts.allowOrigin ?? [] });
    const { url } = await signalServer.listen(listen.port, listen.host).catch((e: NodeJS.ErrnoException) => {
      const reason = e.code === "EADDRINUSE" ? "the port is already in use" : e.code === "EACCES" ? "permission denied" : e.code === "EADDRNOTAVAIL" ? "no such address on this machine" : (e.code ?? e.message);
      throw new UsageError(`--listen ${opts.listen}: cannot receive signals on ${listen.host}:${listen.port}: ${reason}`);
    });
    server = signalServer;
    trace.note(`receiving signals at ${url}${token !== undefined ? " (token required)" : ""}`);
  }

  const studioRun = opts.studio === undefined ? undefined : await (await import("./studio-serve.js")).startRunStudio(h, store, sources, opts.studio, opts.store, token, io, (s) => (studio = s));
  if (studioRun) trace.note(`pulse studio at ${studioRun.url}`);

  let reason = "interrupted" as StopReason;
  let stopRequested: (why: StopReason) => void = () => undefined;
  const stopped = new Promise<void>((resolve) => {
    stopRequested = (why) => {
      reason = why;
      resolve();
      stopRequested = () => undefined;
    };
  });
  signals.onStop(() => stopRequested("interrupted"));
  const hosted = new Set(h.loops.map((l) => l.id));
  const watcher = new QuietWatcher(h, {
    listening: port !== undefined || nats !== undefined,
    now: () => h.clock.now(),
    waiting: (waits) => trace.waiting(`waiting for the next trigger (Ctrl-C stops)`, describeWaits(waits, h.clock.now(), { hosted, listening: port !== undefined || nats !== undefined }), waits),
    starved: (waits) => {
      trace.waiting("nothing can trigger another iteration", describeWaits(waits, h.clock.now(), { hosted, listening: false }), waits);
      stopRequested("starved");
    },
  });
  // --iterations N: the host starts no more than N (cadences, events and signals alike; inner-loop
  // iterations belong to the outer one); once the N-th has started the run stops, letting it and
  // any other already running finish.
  let started = 0;
  let incomplete = 0;
  let stopping = false;
  h.subscribe((e) => {
    if (e.type === "iteration.started") {
      watcher.active();
      if (typeof e.cause?.inner_of !== "string" && ++started === iterations) stopRequested("iterations");
    }
    if (e.type === "iteration.finished" && e.status !== "completed") incomplete++;
    // Its end was in doubt: committed after all, or resumed (the resumed run counts for itself).
    if (e.type === "iteration.resolved" && e.outcome !== "lost") incomplete--;
    // Said once, however many iterations meet it; one that will not pass ends the run (exit 1).
    if (e.type === "store.failed") {
      io.stderr(`pulse run: ${e.message}${e.transient ? `: the loops are paused and try again every ${STORE_RETRY_MS / 1000}s` : ": the loops are stopped"}\n`);
      if (!e.transient) stopRequested("store");
    }
    if (e.type === "iteration.finished" || e.type === "signal.delivered" || e.type === "signal.dropped") watcher.poke();
  });

  // --once stops when every loop ran once: it never waits, so it is never starved either.
  if (opts.once) watcher.close();
  h.start();
  if (fleet) {
    await fleet.start(h);
  } else if (nats) {
    await nats.serve(h);
    trace.note(`signals through NATS ${nats.address.display}, stream ${nats.stream}: taking those for ${h.loops.map((l) => l.id).join(", ")}`);
  }
  for (const e of events) {
    const ran = await h.emitEvent(e.name, e.payload, { workspace });
    if (ran.length === 0) trace.note(`event "${e.name}": no loop iterated (none has an event cadence with this trigger, or its filter did not hold)`);
  }
  // In a fleet each loop runs on its lease holder, on its cadences and signals: no kickoff per host.
  if (!fleet && (opts.once || opts.kickoff !== false)) {
    const kicked = iterations === undefined ? h.loops : h.loops.slice(0, iterations);
    const kickoff = Promise.all(kicked.map((loop) => h.trigger(loop.id, { cause: { trigger: "kickoff" } }).catch((error: Error & { code?: string }) => stopping || error.code === "STORE_FAILED" || trace.note(`${loop.id}: ${error.message}`))));
    if (opts.once) void kickoff.then(() => h.settled()).then(() => stopRequested("once"));
    else void kickoff.then(() => watcher.poke());
  } else watcher.poke();
  const timer = durationMs === undefined ? undefined : setTimeout(() => stopRequested("duration"), durationMs);
  // Whatever the loops wait for, the process waits for the stop (no silent exit with nothing armed).
  const keepAlive = setInterval(() => undefined, 1 << 30);
  await stopped;
  clearInterval(keepAlive);
  watcher.close();
  stopping = true;
  if (timer) clearTimeout(timer);
  trace.note("stopping: letting in-flight iterations and signals finish");
  const stop = await h.stop({ timeoutMs: settings.stopTimeoutMs });
  // After in-flight iterations finished: the leases go, and other hosts take over at once.
  await fleet?.stop();
  await server?.close();
  await studioRun?.close();
  let code: number = EXIT.ok;
  // A store that failed (and had not answered again by the end) fails the run, however it stopped.
  if (h.storeFailure) code = EXIT.problems;
  else if ((opts.once || iterations !== undefined) && incomplete > 0) code = EXIT.problems;
  // --once promises its signals are delivered: one given up at the deadline is a problem.
  else if (opts.once && stop.signalsDropped > 0) code = EXIT.problems;
  else if (reason === "starved" && iterations !== undefined && started < iterations) code = RUN_EXIT.starved;
  trace.summary(h.loops, { reason, code, started, ...(iterations !== undefined ? { iterations } : {}), signalsDropped: stop.signalsDropped, timedOut: stop.timedOut });
  if (code === RUN_EXIT.starved) io.stderr(`pulse run: --iterations ${iterations}: only ${started} could start, and nothing can trigger another (the note above says what each loop waits for)\n`);
  return code;
}
