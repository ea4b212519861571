/**
 * The iteration prompt (seed 000's buildIterationPrompt), shaped by the context strategy:
 * `none` gives the goal and the signal protocol only; `prefetch` puts the anchor turn and the
 * latest progress into the prompt; `mcp` leaves context to the MCP servers handed to the agent
 * and says so; `hybrid` does both.
 */
import type { ResolvedAnchor, Turn } from "./anchors.js";
import type { ContextStrategy, ProgressEntry } from "./records.js";

export interface PromptInput {
  goal: string;
  iteration: number;
  maxIterations: number;
  strategy: ContextStrategy;
  anchor: ResolvedAnchor;
  /** The latest progress entries, oldest first. */
  progress: readonly ProgressEntry[];
  prefetchTurns: number;
  /** A reason the previous iteration blocked, when the session is resumed after it. */
  resumedAfter?: string;
  /** The previous COMPLETE was rejected by the checks: what failed, and whether the escape hatch is open. */
  rejected?: { failures: string; escape: boolean };
  /** A pending guidance change holds the session: the briefing this turn is given instead of going on. */
  replan?: string;
}

export function buildIterationPrompt(p: PromptInput): string {
  const parts: string[] = [];
  if (p.replan) parts.push(p.replan);
  parts.push(`You are working autonomously on this goal, iteration ${p.iteration}${p.maxIterations > 0 ? ` of at most ${p.maxIterations}` : ""}:\n\n${p.goal}`);
  if (p.resumedAfter) parts.push(`The session was resumed by a person after it stopped with: ${p.resumedAfter}\nAssume the blocker has been dealt with, unless you find otherwise.`);
  if (p.rejected) {
    parts.push(`Your COMPLETE was not accepted: pulse ran the checks and they fail where they passed before you started:\n${p.rejected.failures}\nFix these, then signal COMPLETE again.`);
    if (p.rejected.escape) parts.push("If you cannot resolve them, signal COMPLETE and name what remains in `<unresolved>…</unresolved>`: the session then ends blocked, for a person to review.");
  }
  if (p.strategy === "prefetch" || p.strategy === "hybrid") {
    const recent = p.progress.slice(-p.prefetchTurns);
    if (recent.length > 0) parts.push(`Progress so far:\n${recent.map((e) => `- iteration ${e.iteration} (${e.signal})${e.commit ? ` [${e.commit.slice(0, 8)}]` : ""}: ${e.summary}`).join("\n")}`);
    if (p.anchor.turnId) parts.push(`Start from ${describeAnchor(p.anchor.turn, p.anchor.turnId)} (anchor: ${p.anchor.strategy}).`);
  }
  if (p.strategy === "mcp" || p.strategy === "hybrid") {
    parts.push(`The MCP servers you were given hold this session's history (tool pulse_status)${p.anchor.turnId ? `; start from turn ${p.anchor.turnId}` : ""}.`);
  }
  parts.push(
    [
      "Work in the repository in your current directory; commit what you finish with a clear message.",
      // In inline code, so an agent that echoes its prompt (gemini) never signals by echoing it.
      "End your answer with exactly one signal:",
      "  `<signal>CONTINUE</signal>` when there is more to do,",
      "  `<signal>COMPLETE</signal>` when the goal is achieved,",
      "  `<signal>BLOCKED: reason</signal>` when you need a person.",
      "If you have the `pulse_signal` tool, call it with the same signal (and reason) instead.",
      "Optionally suggest what the next iteration should start from: `<anchor_hint><turn_id>ID</turn_id><reason>why</reason></anchor_hint>`.",
    ].join("\n"),
  );
  return parts.join("\n\n");
}

function describeAnchor(turn: Turn | undefined, id: string): string {
  if (!turn) return `turn ${id}`;
  return `turn ${id} (iteration ${turn.iteration}${turn.commit ? `, commit ${turn.commit.slice(0, 8)}` : ""}): ${turn.summary}`;
}
