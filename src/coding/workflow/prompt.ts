/** What the workflow's agent is told: the preflight's brief, and each turn of a pulse (its own messages only). */
import type { PulseRecord, WorkflowRecord } from "./records.js";

export function preflightPrompt(w: Pick<WorkflowRecord, "title" | "verify">, nudge?: string): string {
  return [
    `You are preparing a git worktree for a series of coding pulses (workflow: ${w.title}).`,
    "Set up the environment: install dependencies, initialise submodules (git submodule update --init --recursive) and run a baseline build and the tests.",
    "Tools: the shell, and record_baseline for each error or warning that already exists (issueType, source, pattern, filePath, description).",
    "Do NOT modify tracked files: only untracked artifacts (node_modules, build output) may be created. pulse checks this with git; a preflight that changed a tracked file fails the workflow.",
    w.verify.checks.length > 0 ? `The pulses will be held to these commands: ${w.verify.checks.map((c) => `\`${c}\``).join(", ")}.` : "Name the verification commands (build, tests, lint) the pulses should be held to in preflight_done's verificationCommands.",
    "Finish with preflight_done: summary, setupCommands, buildSuccess, verificationCommands, baselinesRecorded.",
    ...(nudge ? ["", nudge] : []),
  ].join("\n");
}

export function pulsePrompt(w: Pick<WorkflowRecord, "title">, p: Pick<PulseRecord, "number" | "description" | "turns">, total: number, o: { feedback: string | null; escape: boolean }): string {
  return [
    `Workflow: ${w.title}. Pulse ${p.number} of ${total}: make only the changes this pulse asks for.`,
    "",
    p.description,
    "",
    "Read files before editing them; edits are exact-match. Match the existing code's patterns; leave no TODOs. Run the build and tests before you finish.",
    "When the pulse is done, call pulse_done with a Conventional Commit summary (feat: …, fix: …): it becomes the commit message. If you need another turn, call request_extension with what is completed and what remains.",
    ...(o.escape ? ["Your completion was rejected before. If an issue genuinely cannot be fixed, you may name it in pulse_done's unresolvedIssues ({issue, reason}): this halts the workflow for a person to review."] : []),
    ...(o.feedback ? ["", o.feedback] : []),
  ].join("\n");
}
