/**
 * The live trace `pulse run` prints: one line per finished iteration (its phases, where it
 * closed, how long it took, its trace id), one per signal delivered or dropped, notes,
 * escalations and refused invariants; or, with --json, every host event as a JSON line.
 */
import { style, type Style } from "../format/ansi.js";
import type { HostEvent, HostWait } from "../host/host.js";
import type { Loop } from "../runtime/loop.js";
import type { CliIO } from "./io.js";
import { isStoreFailure } from "../host/store-failure.js";

interface Running {
  cause: string;
  phases: string[];
}

/** How a run ended, for the summary. */
export interface RunEnd {
  reason: string;
  code: number;
  /** Iterations the run started (inner-loop iterations are part of their outer one). */
  started: number;
  iterations?: number;
  signalsDropped: number;
  timedOut: boolean;
}

export class TraceWriter {
  private readonly s: Style;
  private readonly running = new Map<string, Running>();
  private readonly retrying = new Set<string>();
  /** Iterations each loop ran as an inner loop (counted in its telemetry, not in the run's total). */
  private readonly inner = new Map<string, number>();
  private width = 24;

  constructor(
    private readonly io: CliIO,
    private readonly options: { json: boolean; color: boolean },
  ) {
    this.s = style(options.color);
  }

  private time(at: number): string {
    return new Date(at).toISOString().slice(11, 23);
  }

  private line(at: number, loopId: string, text: string): void {
    this.io.stdout(`${this.s.dim(this.time(at))}  ${loopId.padEnd(this.width)}  ${text}\n`);
  }

  loaded(loops: readonly Loop[]): void {
    this.width = Math.max(12, ...loops.map((l) => l.id.length));
    if (this.options.json) return;
    for (const loop of loops) {
      const m = loop.compiled.manifest;
      const phases = loop.compiled.phases.map((p) => p.id).join(" → ");
      const cadences: string[] = [];
      for (let c: typeof m.cadence | undefined = m.cadence; c; c = c.fallback) cadences.push(describeCadence(c));
      this.io.stdout(`${this.s.bold("loaded")} ${loop.id}: ${phases} ↺ ${loop.compiled.reentry}; cadence ${cadences.join(", fallback ")}\n`);
    }
    this.io.stdout("\n");
  }

  /** A note of the run (the fleet's leases, NATS, the store), with when it happened. */
  note(message: string, at = Date.now()): void {
    if (this.options.json) this.io.stdout(JSON.stringify({ type: "note", message, at }) + "\n");
    else this.io.stdout(`${this.s.dim(this.time(at))}  ${this.s.dim("note:")} ${message}\n`);
  }

  /** What the loops wait for: a heading and one line per loop (with --json, the waits as data). */
  waiting(heading: string, lines: readonly string[], waits: readonly HostWait[]): void {
    if (this.options.json) this.io.stdout(JSON.stringify({ type: "note", message: `${heading}: ${lines.join("; ")}`, waiting: waits }) + "\n");
    else this.io.stdout(`${this.s.dim("note:")} ${heading}:\n${lines.map((l) => `  ${l}\n`).join("")}`);
  }

  event(e: HostEvent): void {
    if (e.type === "iteration.started" && typeof e.cause?.inner_of === "string") this.inner.set(e.loop_id, (this.inner.get(e.loop_id) ?? 0) + 1);
    if (this.options.json) {
      this.io.stdout(JSON.stringify(e) + "\n");
      return;
    }
    const s = this.s;
    switch (e.type) {
      case "iteration.started":
        this.running.set(e.trace_id, { cause: causeOf(e.cause), phases: [] });
        break;
      case "phase.completed":
        this.running.get(e.trace_id)?.phases.push(`${s.green("✓")} ${e.phase_id}${e.replayed ? s.dim(" (replayed)") : ""}${e.routed_to ? s.dim(` →${e.routed_to}`) : ""}`);
        break;
      case "phase.skipped":
        this.running.get(e.trace_id)?.phases.push(`${s.yellow("↷")} ${e.phase_id}`);
        break;
      case "phase.failed":
        this.running.get(e.trace_id)?.phases.push(`${s.red("✗")} ${e.phase_id}`);
        break;
      case "iteration.finished": {
        const r = this.running.get(e.trace_id);
        this.running.delete(e.trace_id);
        const status = e.status === "completed" ? s.green(e.closed ? "closed" : "done") : e.status === "degraded" ? s.yellow(e.status) : s.red(e.status);
        // A store failure is said once, by pulse run (store.failed): here its code only.
        const why = e.error ? `  ${s.red(e.error.code)}${isStoreFailure(e.error.code) ? "" : `: ${e.error.message}`}` : "";
        this.line(e.at, e.loop_id, `#${e.iteration} ${s.dim(`(${r?.cause ?? "trigger"})`)}  ${(r?.phases ?? []).join("  ")}  ${status}  ${s.dim(`${e.duration_ms}ms  trace ${e.trace_id.slice(0, 8)}`)}${why}`);
        break;
      }
      case "iteration.resolved": {
        const text = `#${e.iteration} ${e.message}  ${s.dim(`trace ${e.trace_id.slice(0, 8)}`)}`;
        this.line(e.at, e.loop_id, e.outcome === "committed" ? s.green(text) : e.outcome === "lost" ? s.red(text) : s.yellow(text));
        break;
      }
      case "signal.delivered":
      case "signal.dropped": {
        const dropped = s.red(`dropped (${e.detail}${e.message ? `: ${e.message}` : ""})`);
        this.line(e.at, e.loop_id, `${e.type === "signal.delivered" ? s.cyan("⇢") : s.red("⇢")} signal ${e.connection} to ${e.to_loop}: ${e.type === "signal.delivered" ? e.detail : dropped}`);
        break;
      }
      case "signal.retrying":
        // The first retries of a receiver that is down: said once per signal, not per attempt.
        if (!this.retrying.has(e.event_id)) {
          this.retrying.add(e.event_id);
          this.line(e.at, e.loop_id, s.yellow(`⇢ signal ${e.connection} to ${e.to_loop}: not delivered yet, retrying${e.detail ? ` (${e.detail})` : ""}`));
        }
        break;
      case "signal.overflow":
        this.line(e.at, e.loop_id, s.yellow(`⇢ signal ${e.connection} to ${e.to_loop}: max_inflight reached${e.detail ? ` (${e.detail})` : ""}`));
        break;
      case "invariant.violated":
        this.line(e.at, e.loop_id, `${s.red("✗")} ${e.invariant} ${e.section}: ${e.message}`);
        break;
      case "circuit.state_changed":
        this.line(e.at, e.loop_id, `${s.yellow("⚡")} ${e.slot} circuit ${e.previous} → ${e.state}`);
        break;
      case "escalation":
        this.line(e.at, e.loop_id, `${s.yellow("⚠")} escalation from phase ${e.phase_id} to ${e.to}: ${e.reason}`);
        break;
      case "host.note":
        this.line(e.at, e.loop_id, s.dim(e.message));
        break;
      case "cadence.declined":
        if (!e.reason.startsWith("the host is stopping") && !e.reason.startsWith("the store failed")) this.line(e.at, e.loop_id, s.dim(`${e.cadence} trigger declined: ${e.reason}`));
        break;
    }
  }

  /** One line per loop (a loop that never ran says so), then how the run ended; with --json, one run.summary record. */
  summary(loops: readonly Loop[], end: RunEnd): void {
    const rows = loops.map((loop) => {
      const t = loop.telemetry();
      return { loop_id: loop.id, iterations: t.iteration_count, inner: this.inner.get(loop.id) ?? 0, statuses: t.iteration_statuses, closed: t.closed_count, closure_rate: t.closure_rate };
    });
    const inner = rows.reduce((n, r) => n + r.inner, 0);
    if (this.options.json) {
      const record = { type: "run.summary", stopped: end.reason, exit_code: end.code, iterations: end.started, inner_iterations: inner, ...(end.iterations !== undefined ? { iterations_asked: end.iterations } : {}), signals_dropped: end.signalsDropped, stop_timed_out: end.timedOut, loops: rows };
      this.io.stdout(JSON.stringify(record) + "\n");
      return;
    }
    this.io.stdout("\n");
    for (const r of rows) {
      if (r.iterations === 0) {
        this.io.stdout(`${r.loop_id.padEnd(this.width)}  never ran\n`);
        continue;
      }
      const statuses = Object.entries(r.statuses).map(([k, v]) => `${v} ${k}`).join(", ");
      const asInner = r.inner === 0 ? "" : r.inner === r.iterations ? " as an inner loop" : `, ${r.inner} as an inner loop`;
      this.io.stdout(`${r.loop_id.padEnd(this.width)}  ${plural(r.iterations, "iteration")}${asInner} (${statuses}), closure rate ${r.closure_rate.toFixed(2)}\n`);
    }
    const asked = end.iterations !== undefined ? ` of the ${end.iterations} asked` : "";
    const within = inner > 0 ? `, and ${plural(inner, "inner-loop iteration")} within them` : "";
    this.io.stdout(`${plural(end.started, "iteration")}${asked}${within}; ${STOPPED[end.reason] ?? end.reason}\n`);
  }
}

const STOPPED: Record<string, string> = {
  once: "every loop ran once",
  iterations: "stopped after --iterations",
  duration: "stopped after --duration",
  interrupted: "stopped by Ctrl-C",
  starved: "stopped: nothing could trigger another iteration",
  store: "stopped: the store failed",
};

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

function describeCadence(c: { type: string; params?: Record<string, unknown> }): string {
  const p = c.params ?? {};
  switch (c.type) {
    case "periodic":
      return `periodic ${String(p.interval)}`;
    case "event":
      return `event ${String(p.trigger)}`;
    case "idle":
      return `idle ${String(p.min_idle_ms)}ms`;
    case "cross_loop_signal":
      return `signal from ${String(p.from_loop)}${p.from_phase ? `/${String(p.from_phase)}` : ""}`;
    case "streaming":
      return `stream ${String(p.stream)}`;
    default:
      return c.type;
  }
}

/** What a trace line says started an iteration: a cadence, an event, a signal, a trigger, an outer loop. */
function causeOf(cause: Record<string, unknown> | undefined): string {
  if (typeof cause?.cadence === "string") return cause.cadence;
  if (typeof cause?.signal === "string") return `signal from ${String(cause.source ?? "?").replace(/^loop:/, "").replace("/phase:", "/")}`;
  if (typeof cause?.event === "string") return `event ${cause.event}`;
  if (typeof cause?.trigger === "string") return cause.trigger;
  if (typeof cause?.inner_of === "string") return `inner loop of ${cause.inner_of}/${String(cause.phase)}, ${String(cause.wait)}`;
  return "trigger";
}
