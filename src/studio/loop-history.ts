/**
 * What the studio shows of each hosted loop, built from the host's event stream: the last
 * iterations (a row each, a cell per phase with its outcome and duration), the phases' recent
 * durations for p50/p95, circuit states, and the outputs the phases returned (captured by the
 * handler wrapper, cut to a bound). Everything is bounded: memory stays flat however long the
 * loops run; older iterations are read from the store's audit trail by trace id.
 */
import type { HostEvent } from "../host/host-events.js";

export interface PhaseCell {
  phase_id: string;
  status: "running" | "completed" | "replayed" | "failed" | "skipped" | "retrying";
  attempt: number;
  started_at: number;
  duration_ms?: number;
  signature?: string;
  routed_to?: string;
  error?: { code: string; message: string };
  input?: string;
  output?: string;
}

export interface IterationRow {
  loop_id: string;
  workspace_id: string;
  trace_id: string;
  iteration: number;
  entry: string;
  cause?: Record<string, unknown>;
  started_at: number;
  status: string;
  closed?: boolean;
  duration_ms?: number;
  error?: { code: string; message: string };
  phases: PhaseCell[];
}

export const MAX_ROWS = 100;
const MAX_SAMPLES = 200;
/** The most of an input or output kept as text (the trace view shows it expandable). */
export const MAX_VALUE_CHARS = 8192;

export function clip(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? "undefined";
  } catch {
    text = String(value);
  }
  return text.length > MAX_VALUE_CHARS ? `${text.slice(0, MAX_VALUE_CHARS)}… [${text.length - MAX_VALUE_CHARS} more characters]` : text;
}

function percentile(sorted: number[], p: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

class LoopRecord {
  rows: IterationRow[] = [];
  samples = new Map<string, { values: number[]; next: number }>();
  circuits: Record<string, string> = {};
  lastAt: number | undefined;
}

export class LoopHistory {
  private readonly loops = new Map<string, LoopRecord>();
  private readonly byTrace = new Map<string, IterationRow>();

  private record(loopId: string): LoopRecord {
    let r = this.loops.get(loopId);
    if (!r) this.loops.set(loopId, (r = new LoopRecord()));
    return r;
  }

  /** Folds one host event in; returns the row it changed, if any. */
  observe(e: HostEvent): IterationRow | undefined {
    switch (e.type) {
      case "iteration.started": {
        const r = this.record(e.loop_id);
        const row: IterationRow = { loop_id: e.loop_id, workspace_id: e.workspace_id, trace_id: e.trace_id, iteration: e.iteration, entry: e.entry, started_at: e.at, status: "running", phases: [], ...(e.cause ? { cause: e.cause } : {}) };
        r.rows.push(row);
        r.lastAt = e.at;
        this.byTrace.set(e.trace_id, row);
        if (r.rows.length > MAX_ROWS) for (const old of r.rows.splice(0, r.rows.length - MAX_ROWS)) this.byTrace.delete(old.trace_id);
        return row;
      }
      case "iteration.finished": {
        const row = this.byTrace.get(e.trace_id);
        if (!row) return undefined;
        Object.assign(row, { status: e.status, closed: e.closed, duration_ms: e.duration_ms, ...(e.error ? { error: e.error } : {}) });
        return row;
      }
      case "phase.started":
      case "phase.retrying": {
        const row = this.byTrace.get(e.trace_id);
        if (!row) return undefined;
        const cell = this.cell(row, e.phase_id, e.at);
        cell.status = e.type === "phase.started" ? "running" : "retrying";
        cell.attempt = e.attempt;
        if (e.type === "phase.retrying") cell.error = e.error;
        return row;
      }
      case "phase.completed": {
        const row = this.byTrace.get(e.trace_id);
        if (!row) return undefined;
        const cell = this.cell(row, e.phase_id, e.at - e.duration_ms);
        Object.assign(cell, { status: e.replayed ? "replayed" : "completed", duration_ms: e.duration_ms, signature: e.signature, ...(e.routed_to ? { routed_to: e.routed_to } : {}) });
        const samples = this.record(e.loop_id).samples;
        let ring = samples.get(e.phase_id);
        if (!ring) samples.set(e.phase_id, (ring = { values: [], next: 0 }));
        // A ring: the last MAX_SAMPLES durations, without shifting an array per phase.
        if (ring.values.length < MAX_SAMPLES) ring.values.push(e.duration_ms);
        else ring.values[ring.next] = e.duration_ms;
        ring.next = (ring.next + 1) % MAX_SAMPLES;
        return row;
      }
      case "phase.failed":
      case "phase.skipped": {
        const row = this.byTrace.get(e.trace_id);
        if (!row) return undefined;
        const cell = this.cell(row, e.phase_id, e.at);
        cell.status = e.type === "phase.failed" ? "failed" : "skipped";
        if (e.type === "phase.failed") cell.error = e.error;
        if (cell.duration_ms === undefined) cell.duration_ms = Math.max(0, e.at - cell.started_at);
        return row;
      }
      case "circuit.state_changed":
        this.record(e.loop_id).circuits[e.slot] = e.state;
        return undefined;
      default:
        return undefined;
    }
  }

  private cell(row: IterationRow, phaseId: string, at: number): PhaseCell {
    // A phase visited again (a route back) gets a new cell unless this one is still open.
    for (let i = row.phases.length - 1; i >= 0; i--) {
      const c = row.phases[i]!;
      if (c.phase_id === phaseId && (c.status === "running" || c.status === "retrying")) return c;
    }
    const cell: PhaseCell = { phase_id: phaseId, status: "running", attempt: 1, started_at: at };
    row.phases.push(cell);
    return cell;
  }

  /** The handler's input and output of a phase (the handler wrapper calls this). */
  capture(traceId: string, phaseId: string, input: unknown, output: unknown): void {
    const row = this.byTrace.get(traceId);
    if (!row) return;
    const cell = [...row.phases].reverse().find((c) => c.phase_id === phaseId);
    if (!cell) return;
    cell.input = clip(input);
    cell.output = clip(output);
  }

  rows(loopId: string, limit = MAX_ROWS): IterationRow[] {
    return (this.loops.get(loopId)?.rows ?? []).slice(-limit);
  }

  trace(traceId: string): IterationRow | undefined {
    return this.byTrace.get(traceId);
  }

  /** Traces held whose id, loop id or a phase's output contains `q` (newest first). */
  search(q: string, limit = 50): IterationRow[] {
    const needle = q.trim().toLowerCase();
    const all = [...this.byTrace.values()].sort((a, b) => b.started_at - a.started_at);
    if (needle === "") return all.slice(0, limit);
    return all.filter((r) => r.trace_id.startsWith(needle) || r.loop_id.toLowerCase().includes(needle) || r.phases.some((c) => c.output?.toLowerCase().includes(needle))).slice(0, limit);
  }

  lastIteration(loopId: string): IterationRow | undefined {
    return this.loops.get(loopId)?.rows.at(-1);
  }

  circuits(loopId: string): Record<string, string> {
    return { ...(this.loops.get(loopId)?.circuits ?? {}) };
  }

  /** p50 and p95 of each phase's recent durations (the last 200 completions). */
  percentiles(loopId: string): Record<string, { p50: number | null; p95: number | null; samples: number }> {
    const out: Record<string, { p50: number | null; p95: number | null; samples: number }> = {};
    for (const [phase, ring] of this.loops.get(loopId)?.samples ?? []) {
      const sorted = [...ring.values].sort((a, b) => a - b);
      out[phase] = { p50: percentile(sorted, 50), p95: percentile(sorted, 95), samples: sorted.length };
    }
    return out;
  }
}
