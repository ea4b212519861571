/**
 * Anchor resolution (seed 000): which earlier turn an iteration starts from, tried in the seed's
 * order: chained (the previous iteration's `<anchor_hint>`), explicit (the session's anchor),
 * semantic (the turn of the memory substrate closest to the goal), temporal (the most recent
 * turn). Each resolution records its strategy, how long it took, a salience and a depth.
 * Pure apart from the clock: the turns are given.
 */
import type { AnchorStrategy } from "./records.js";

/** A turn of the session's conversation: one earlier iteration, as the memory substrate keeps it. */
export interface Turn {
  id: string;
  iteration: number;
  summary: string;
  signal?: string;
  commit?: string | null;
  files?: string[];
  /** How deep in the chain of anchors this turn sits (0: anchored to nothing). */
  depth: number;
}

export interface AnchorQuery {
  /** The previous iteration's anchor_hint_next. */
  chained?: string | null;
  /** The session's anchor_turn_id. */
  explicit?: string | null;
  goal: string;
  turns: readonly Turn[];
  /** Below this word-overlap score the semantic strategy finds nothing. */
  minSalience: number;
}

export interface ResolvedAnchor {
  strategy: AnchorStrategy;
  turnId: string | null;
  /** The turn, when the memory substrate knows it (an explicit anchor may name an outside turn). */
  turn?: Turn;
  ms: number;
  /** 0..1: 1 for an anchor someone named, the goal overlap for semantic, recency for temporal. */
  salience: number;
  depth: number;
}

export function resolveAnchor(q: AnchorQuery, now: () => number = () => performance.now()): ResolvedAnchor {
  const started = now();
  const done = (r: Omit<ResolvedAnchor, "ms">): ResolvedAnchor => ({ ...r, ms: Math.max(0, now() - started) });
  const byId = (id: string) => q.turns.find((t) => t.id === id);
  for (const [strategy, id] of [["chained", q.chained], ["explicit", q.explicit]] as const) {
    const wanted = id?.trim();
    if (!wanted) continue;
    const turn = byId(wanted);
    return done({ strategy, turnId: wanted, ...(turn ? { turn } : {}), salience: 1, depth: turn ? turn.depth + 1 : 1 });
  }
  if (q.turns.length === 0) return done({ strategy: "none", turnId: null, salience: 0, depth: 0 });
  const goal = words(q.goal);
  let best: { turn: Turn; score: number } | undefined;
  for (const turn of q.turns) {
    const score = overlap(goal, words(`${turn.summary} ${(turn.files ?? []).join(" ")}`));
    if (!best || score > best.score || (score === best.score && turn.iteration > best.turn.iteration)) best = { turn, score };
  }
  if (best && best.score >= q.minSalience && best.score > 0) return done({ strategy: "semantic", turnId: best.turn.id, turn: best.turn, salience: round(best.score), depth: best.turn.depth + 1 });
  const latest = [...q.turns].sort((a, b) => b.iteration - a.iteration)[0]!;
  return done({ strategy: "temporal", turnId: latest.id, turn: latest, salience: round(1 / q.turns.length), depth: latest.depth + 1 });
}

const STOP = new Set(["the", "a", "an", "and", "or", "to", "of", "in", "on", "for", "with", "is", "it", "this", "that", "be", "as", "by", "at"]);

function words(text: string): Set<string> {
  return new Set(text.toLowerCase().split(/[^a-z0-9]+/).filter((w) => w.length > 1 && !STOP.has(w)));
}

/** The share of the goal's words the turn mentions. */
function overlap(goal: Set<string>, turn: Set<string>): number {
  if (goal.size === 0) return 0;
  let hit = 0;
  for (const w of goal) if (turn.has(w)) hit++;
  return hit / goal.size;
}

function round(n: number): number {
  return Math.round(n * 1000) / 1000;
}
