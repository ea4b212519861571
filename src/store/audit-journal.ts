/**
 * `pulse audit verify` beyond the hash chain: each iteration's audit events (one trail per loop,
 * workspace and trace id) are numbered 0, 1, 2, … without a gap (§7.3), and every step the
 * iteration journal committed has its events in the trail: each committed phase and its end (its
 * start is seq 0). An event cut from a trace (the chain re-hashed behind it, or its checkpoint edited), or a
 * trail emptied under a journal that still records iterations, is named by its trace.
 * Shared by the SQLite, PostgreSQL and memory stores.
 */
import type { ChainReport } from "./contracts.js";

/** What the check needs of an audit event. */
export interface TrailEvent {
  workspace_id: string;
  loop_id: string;
  trace_id: string;
  seq: number;
  event_type: string;
  phase_id: string | null;
}

/** An iteration as the journal holds it. */
export interface JournalIteration {
  workspace_id: string;
  loop_id: string;
  trace_id: string;
  /** Its end was committed (any status but running). */
  finished: boolean;
  phases: { phase_id: string; status: string }[];
}

export interface TraceProblem {
  workspace_id: string;
  trace_id: string;
  loop_id: string;
  reason: string;
}

interface Trail {
  seqs: number[];
  /** `event_type phase_id` of each event (phase events) and the iteration's start and end. */
  kinds: Set<string>;
}

const key = (ws: string, loop: string, trace: string) => `${ws}\u0000${loop}\u0000${trace}`;

/** The phase event a committed phase row must have, by its status. */
function phaseEvents(status: string): string[] {
  return status === "skipped" ? ["phase.skipped"] : ["phase.completed", "phase.routed"];
}

export class TrailCheck {
  private readonly trails = new Map<string, Trail>();

  add(e: TrailEvent): void {
    const k = key(e.workspace_id, e.loop_id, e.trace_id);
    let t = this.trails.get(k);
    if (!t) this.trails.set(k, (t = { seqs: [], kinds: new Set() }));
    t.seqs.push(e.seq);
    t.kinds.add(e.phase_id === null ? e.event_type : `${e.event_type} ${e.phase_id}`);
  }

  /** Every trace whose seq has a gap, then every journaled iteration missing events; the first of each trace only. */
  problems(journal: Iterable<JournalIteration>): TraceProblem[] {
    const out: TraceProblem[] = [];
    const named = new Set<string>();
    const say = (ws: string, loop: string, trace: string, reason: string) => {
      const k = key(ws, loop, trace);
      if (named.has(k)) return;
      named.add(k);
      out.push({ workspace_id: ws, loop_id: loop, trace_id: trace, reason });
    };
    for (const [k, t] of this.trails) {
      const [ws, loop, trace] = k.split("\u0000") as [string, string, string];
      const seqs = t.seqs.sort((a, b) => a - b);
      for (let i = 0; i < seqs.length; i++) {
        if (seqs[i] === i) continue;
        say(ws, loop, trace, seqs[i] === i - 1 ? `its seq ${i - 1} is there twice` : `its event seq ${i} is missing (the next one is seq ${seqs[i]})`);
        break;
      }
    }
    for (const it of journal) {
      const t = this.trails.get(key(it.workspace_id, it.loop_id, it.trace_id));
      const missing = (what: string) => say(it.workspace_id, it.loop_id, it.trace_id, `the journal committed ${what}, and the audit trail has no event of it`);
      if (!t) {
        missing(`this iteration${it.phases.length > 0 ? ` (${it.phases.length} phase${it.phases.length === 1 ? "" : "s"})` : ""}`);
        continue;
      }
      // Its start is seq 0, which the gap check above already asks for.
      for (const p of it.phases) if (!phaseEvents(p.status).some((type) => t.kinds.has(`${type} ${p.phase_id}`))) missing(`its phase ${p.phase_id}`);
      if (it.finished && !t.kinds.has("iteration.completed") && !t.kinds.has("iteration.failed")) missing("its end");
    }
    return out;
  }
}

/**
 * The chains' reports with each workspace's first trace problem: a workspace whose chain holds
 * (or that has no chain at all, only a journal) is broken at that trace (chain_seq -1: not a link).
 */
export function withTraceProblems(reports: ChainReport[], problems: readonly TraceProblem[]): ChainReport[] {
  const byWs = new Map(reports.map((r) => [r.workspace_id, r]));
  for (const p of problems) {
    let r = byWs.get(p.workspace_id);
    if (!r) byWs.set(p.workspace_id, (r = { workspace_id: p.workspace_id, ok: true, events: 0 }));
    if (!r.ok) continue;
    r.ok = false;
    r.broken = { chain_seq: -1, event_id: null, trace_id: p.trace_id, reason: `trace ${p.trace_id} of ${p.loop_id}: ${p.reason}` };
  }
  return [...byWs.values()].sort((a, b) => (a.workspace_id < b.workspace_id ? -1 : a.workspace_id > b.workspace_id ? 1 : 0));
}
