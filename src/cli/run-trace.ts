/**
 * The live trace `pulse run` prints: one line per finished iteration (its phases, where it
 * closed, how long it took, its trace id), one per signal delivered or dropped, notes,
 * escalations and refused invariants; or, with --json, every host event as a JSON line.
 */
import { style, type Style } from "../format/ansi.js";
import type { HostEvent } from "../host/host.js";
import type { Loop } from "../runtime/loop.js";
import type { CliIO } from "./io.js";

interface Running {
  cause: string;
  phases: string[];
}

export class TraceWriter {
  private readonly s: Style;
  private readonly running = new Map<string, Running>();
  private readonly lastCause = new Map<string, string>();
  private readonly retrying = new Set<string>();
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

  note(message: string): void {
    if (this.options.json) this.io.stdout(JSON.stringify({ type: "note", message }) + "\n");
    else this.io.stdout(`${this.s.dim("note:")} ${message}\n`);
  }

  event(e: HostEvent): void {
    if (this.options.json) {
      this.io.stdout(JSON.stringify(e) + "\n");
      return;
    }
    const s = this.s;
    switch (e.type) {
      case "cadence.fired":
        this.lastCause.set(e.loop_id, e.cadence);
        break;
      case "iteration.started":
        this.running.set(e.trace_id, { cause: this.lastCause.get(e.loop_id) ?? causeOf(e.cause), phases: [] });
        this.lastCause.delete(e.loop_id);
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
        const why = e.error ? `  ${s.red(e.error.code)}: ${e.error.message}` : "";
        this.line(e.at, e.loop_id, `#${e.iteration} ${s.dim(`(${r?.cause ?? "trigger"})`)}  ${(r?.phases ?? []).join("  ")}  ${status}  ${s.dim(`${e.duration_ms}ms  trace ${e.trace_id.slice(0, 8)}`)}${why}`);
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
        if (!e.reason.startsWith("the host is stopping")) this.line(e.at, e.loop_id, s.dim(`${e.cadence} trigger declined: ${e.reason}`));
        break;
    }
  }

  summary(loops: readonly Loop[]): void {
    if (this.options.json) return;
    this.io.stdout("\n");
    for (const loop of loops) {
      const t = loop.telemetry();
      const statuses = Object.entries(t.iteration_statuses).map(([k, v]) => `${v} ${k}`).join(", ") || "no iteration";
      this.io.stdout(`${loop.id.padEnd(this.width)}  ${t.iteration_count} iteration${t.iteration_count === 1 ? "" : "s"} (${statuses}), closure rate ${t.closure_rate.toFixed(2)}\n`);
    }
  }
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

/** What a trace line says started an iteration the cadence did not fire (a signal, a manual trigger). */
function causeOf(cause: Record<string, unknown> | undefined): string {
  if (typeof cause?.signal === "string") return `signal from ${String(cause.source ?? "?").replace(/^loop:/, "").replace("/phase:", "/")}`;
  if (typeof cause?.event === "string") return `event ${cause.event}`;
  if (typeof cause?.trigger === "string") return cause.trigger;
  if (typeof cause?.inner_of === "string") return `inner loop of ${cause.inner_of}/${String(cause.phase)}, ${String(cause.wait)}`;
  return "trigger";
}
