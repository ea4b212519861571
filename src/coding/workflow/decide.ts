/**
 * The route phase's judgement of one pulse turn, pure: the completion tool the agent called (if
 * any), the tool calls that failed in its recent history, the gate's verdict and the pulse's
 * counts in; accept, reject (with the reasons), extend, nudge, fail or stop out.
 */
import { describeVerdict, type GateVerdict } from "../gate.js";
import { isToolCall } from "../completion-tools.js";
import type { AgentResult, ToolCall } from "../../agents/contract.js";
import type { UnresolvedIssue } from "./records.js";

export type TurnDecision = "accept" | "reject" | "extend" | "nudge" | "fail" | "stop" | "halt" | "replan";

export interface Completion {
  summary: string;
  unresolvedIssues: UnresolvedIssue[];
}

/** The last pulse_done (or complete_pulse) call of the turn, read leniently; undefined when there is none. */
export function completionOf(calls: readonly ToolCall[]): Completion | undefined {
  const call = [...calls].reverse().find((c) => isToolCall(c.name, "pulse_done"));
  if (!call) return undefined;
  const summary = typeof call.arguments.summary === "string" ? call.arguments.summary.trim() : "";
  const raw = Array.isArray(call.arguments.unresolvedIssues) ? call.arguments.unresolvedIssues : [];
  const unresolvedIssues = raw.filter((i): i is UnresolvedIssue => !!i && typeof i === "object" && typeof (i as UnresolvedIssue).issue === "string").map((i) => ({ issue: i.issue, reason: typeof i.reason === "string" ? i.reason : "" }));
  return { summary, unresolvedIssues };
}

export function extensionOf(calls: readonly ToolCall[]): { reason: string; remaining: string[] } | undefined {
  const call = [...calls].reverse().find((c) => isToolCall(c.name, "request_extension"));
  if (!call) return undefined;
  return { reason: String(call.arguments.reason ?? ""), remaining: Array.isArray(call.arguments.remaining) ? call.arguments.remaining.map(String) : [] };
}

/** A tool result as the driver reported it, with the path its call named. */
export interface ToolOutcome {
  name: string;
  ok: boolean;
  output: string;
  path?: string;
}

const WRITES = /(^|__|\.)(write_file|edit_file|multi_edit|write|edit)$/;
const SHELL = /(^|__|\.)(shell|bash|run_command)$/;

/**
 * Failed tool calls that still stand (seed 001's scan of recent messages, as its code does it):
 * a failed write or edit counts unless a later one on the same path succeeded; a failed shell
 * command counts unless a later shell command succeeded.
 */
export function standingFailures(outcomes: readonly ToolOutcome[]): string[] {
  const out: string[] = [];
  outcomes.forEach((o, i) => {
    if (o.ok) return;
    const later = outcomes.slice(i + 1);
    if (WRITES.test(o.name) && later.some((l) => l.ok && WRITES.test(l.name) && l.path === o.path)) return;
    if (SHELL.test(o.name) && later.some((l) => l.ok && SHELL.test(l.name))) return;
    if (!WRITES.test(o.name) && !SHELL.test(o.name)) return;
    out.push(`${o.name}${o.path ? ` ${o.path}` : ""} failed: ${o.output.trim().split("\n").slice(-2).join(" ").slice(0, 300)}`);
  });
  return out;
}

export interface TurnFacts {
  status: AgentResult["status"];
  error?: string;
  aborted: boolean;
  completion?: Completion;
  extension?: { reason: string; remaining: string[] };
  failures: string[];
  gate: GateVerdict | null;
  /** The pulse's counts before this turn. */
  turns: number;
  rejections: number;
  nudges: number;
  limits: { maxTurnsPerPulse: number; maxNudges: number; maxRejections: number; autoExtension: boolean };
}

export interface TurnVerdict {
  decision: TurnDecision;
  /** What the pulse's record gets: its counts after the turn and the feedback its next turn is told. */
  rejections: number;
  nudges: number;
  extensions: number;
  feedback: string | null;
  reason: string | null;
  summary: string | null;
  unresolvedIssues: UnresolvedIssue[];
}

export function judgeTurn(f: TurnFacts): TurnVerdict {
  const base = { rejections: f.rejections, nudges: f.nudges, extensions: 0, feedback: null, reason: null, summary: null, unresolvedIssues: [] as UnresolvedIssue[] };
  const turn = f.turns; // this turn's number within the pulse
  const overLimit = (why: string): TurnVerdict => ({ ...base, decision: "fail", reason: `${why}; the pulse is over its limit of ${f.limits.maxTurnsPerPulse} turns` });
  if (f.aborted || f.status === "aborted") return { ...base, decision: "stop", reason: "stopped during its turn" };
  if (f.status !== "ok") return { ...base, decision: "fail", reason: `the agent's turn ended ${f.status}${f.error ? `: ${f.error}` : ""}` };
  if (f.completion) {
    const reasons = [...(f.completion.summary ? [] : ["pulse_done needs a summary (a Conventional Commit message)"]), ...f.failures.map((x) => `a tool call failed and was not fixed: ${x}`)];
    if (f.gate && !f.gate.passed) reasons.push(`the verification commands gained failures the baseline does not have:\n${describeVerdict(f.gate)}`);
    const escapeOpen = f.rejections >= f.limits.maxRejections;
    if (reasons.length === 0 || (escapeOpen && f.completion.unresolvedIssues.length > 0 && f.completion.summary)) {
      return { ...base, decision: "accept", summary: f.completion.summary, unresolvedIssues: escapeOpen ? f.completion.unresolvedIssues : [] };
    }
    const rejections = f.rejections + 1;
    if (turn >= f.limits.maxTurnsPerPulse) return { ...overLimit(`its completion was rejected ${rejections} time(s)`), rejections };
    const escape = rejections >= f.limits.maxRejections ? "\nIf an issue genuinely cannot be fixed, call pulse_done with unresolvedIssues naming it: the workflow then halts for a person." : "";
    return { ...base, decision: "reject", rejections, feedback: `Your pulse_done was rejected:\n- ${reasons.join("\n- ")}\nFix these, then call pulse_done again.${escape}`, reason: reasons.join("; ") };
  }
  if (f.extension) {
    if (!f.limits.autoExtension) return { ...base, decision: "halt", extensions: 1, reason: `the agent asked for an extension (${f.extension.reason}); resume to grant it` };
    if (turn >= f.limits.maxTurnsPerPulse) return overLimit("it asked for another extension");
    return { ...base, decision: "extend", extensions: 1, feedback: `Continue.${f.extension.remaining.length ? ` Remaining: ${f.extension.remaining.join("; ")}.` : ""}` };
  }
  const nudges = f.nudges + 1;
  if (nudges > f.limits.maxNudges) return { ...base, nudges, decision: "fail", reason: `the agent ended ${nudges} turns without pulse_done or request_extension` };
  if (turn >= f.limits.maxTurnsPerPulse) return { ...overLimit("it ended its turn without a completion tool"), nudges };
  return { ...base, nudges, decision: "nudge", feedback: "You ended your turn without calling pulse_done or request_extension. Finish the pulse and call pulse_done, or call request_extension if you need another turn." };
}

/**
 * A turn the guidance gate held (the guidance changed): it replans, nothing else, so a pulse_done
 * in it is not judged. Acknowledged, the pulse goes on under the new plan with its feedback as it
 * was; not, it counts as a nudge (a turn without progress) and the next turn is held again; past
 * maxNudges the workflow halts for a person (who can acknowledge with `pulse guidance ack`, then resume).
 */
export function judgeReplan(f: { status: AgentResult["status"]; error?: string; aborted: boolean; accepted: boolean; reason: string; rejections: number; nudges: number; feedback: string | null; limits: { maxNudges: number } }): TurnVerdict {
  const base = { rejections: f.rejections, nudges: f.nudges, extensions: 0, feedback: f.feedback, reason: null, summary: null, unresolvedIssues: [] as UnresolvedIssue[] };
  if (f.aborted || f.status === "aborted") return { ...base, decision: "stop", reason: "stopped during its replan turn" };
  if (f.accepted) return { ...base, decision: "replan", reason: "replanned under the changed guidance" };
  if (f.status !== "ok") return { ...base, decision: "fail", reason: `the agent's replan turn ended ${f.status}${f.error ? `: ${f.error}` : ""}` };
  const nudges = f.nudges + 1;
  if (nudges > f.limits.maxNudges) return { ...base, nudges, decision: "halt", reason: `the guidance changed and the agent has not acknowledged it (${f.reason}) after ${nudges} turns without progress (limits.maxNudges ${f.limits.maxNudges}): acknowledge with pulse guidance ack, then resume` };
  return { ...base, nudges, decision: "replan", reason: f.reason };
}
