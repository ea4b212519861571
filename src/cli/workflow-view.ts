/**
 * What `pulse workflow` shows: a line per event while it runs, and the review summary (pulses,
 * commits, unresolved issues, baselines, gate results, cost) as text, JSON or Markdown.
 */
import type { PreflightBaseline, PreflightSetup, PulseRecord, WorkflowRecord } from "../coding/workflow/records.js";
import { displayedStatus } from "../coding/run-records.js";
import type { WorkflowEvent } from "../coding/workflow/run-state.js";

export interface ReviewSummary {
  workflow: { id: string; title: string; status: string; reason: string | null; repo: string; base: string; base_sha: string; base_note: string | null; branch: string; worktree: string | null; turns: number; tokens: number; cost_usd: number };
  preflight: { status: string; summary: string | null; error: string | null } | null;
  baselines: { commands: { command: string; exit: number; failures: number }[]; patterns: { issueType: string; source: string; pattern: string; filePath?: string }[] };
  pulses: { number: number; title: string; status: string; commit: string | null; recovery: boolean; branch: string | null; summary: string | null; files: string[]; turns: number; rejections: number; unresolved: { issue: string; reason: string }[]; gate: "passed" | "failed" | null; reason: string | null; cost_usd: number }[];
  review: string[];
}

/** A running workflow whose runner is gone is shown as interrupted: the status is never a lie. */
export function shownStatus(w: WorkflowRecord): string {
  return displayedStatus(w.status, w.runner_pid);
}

export function summaryOf(w: WorkflowRecord, pulses: PulseRecord[], setup: PreflightSetup | undefined, patterns: PreflightBaseline[], worktreeExists: boolean): ReviewSummary {
  return {
    workflow: { id: w.id, title: w.title, status: shownStatus(w), reason: w.status_reason, repo: w.repo_path, base: w.base_ref, base_sha: w.base_sha, base_note: w.base_note, branch: w.branch_name, worktree: worktreeExists ? w.worktree_path : null, turns: w.turns, tokens: w.total_tokens_used, cost_usd: Math.round(w.total_cost_usd * 10000) / 10000 },
    preflight: setup ? { status: setup.status, summary: setup.summary, error: setup.error_message } : null,
    baselines: { commands: (w.verify.baseline ?? []).map((b) => ({ command: b.command, exit: b.exit, failures: b.failures.length })), patterns: patterns.map((p) => ({ issueType: p.issueType, source: p.source, pattern: p.pattern, ...(p.filePath ? { filePath: p.filePath } : {}) })) },
    pulses: pulses.map((p) => ({ number: p.number, title: p.title, status: p.status, commit: p.checkpoint_commit_sha, recovery: p.is_recovery_checkpoint, branch: p.status === "succeeded" ? null : p.pulse_branch, summary: p.summary, files: p.files_changed, turns: p.turns, rejections: p.rejections, unresolved: p.unresolved_issues, gate: p.gate ? (p.gate.passed ? "passed" : "failed") : null, reason: p.failure_reason, cost_usd: Math.round(p.cost_usd * 10000) / 10000 })),
    review: [`git -C ${w.repo_path} log --oneline ${w.base_ref}..${w.branch_name}`, `git -C ${w.repo_path} diff ${w.base_ref}...${w.branch_name}`, `git -C ${w.repo_path} merge --ff-only ${w.branch_name}   # on ${w.base_ref}, when it is approved`],
  };
}

export function summaryText(s: ReviewSummary): string {
  const w = s.workflow;
  const lines = [`workflow ${w.id} · ${w.title} · ${w.status}${w.reason ? `: ${w.reason}` : ""}`, `branch ${w.branch} from ${w.base} (${w.base_sha.slice(0, 8)})${w.worktree ? ` · worktree ${w.worktree}` : ""}`];
  if (w.base_note) lines.push(`note: ${w.base_note}`);
  if (s.preflight) lines.push(`preflight ${s.preflight.status}${s.preflight.summary ? `: ${s.preflight.summary}` : ""}${s.preflight.error ? `: ${s.preflight.error}` : ""}`);
  for (const c of s.baselines.commands) lines.push(`baseline \`${c.command}\`: exit ${c.exit}${c.failures ? `, ${c.failures} known failure line(s)` : ""}`);
  for (const p of s.baselines.patterns) lines.push(`baseline ${p.issueType} (${p.source}): ${p.pattern}${p.filePath ? ` in ${p.filePath}` : ""}`);
  for (const p of s.pulses) {
    const commit = p.commit ? ` ${p.recovery ? "recovery " : ""}${p.commit.slice(0, 8)}` : "";
    lines.push(`  ${p.number}. ${p.status.padEnd(9)}${commit} ${p.summary ?? p.title}${p.turns ? ` (${p.turns} turn${p.turns === 1 ? "" : "s"}${p.rejections ? `, ${p.rejections} rejected` : ""}${p.gate ? `, gate ${p.gate}` : ""})` : ""}${p.branch && p.status !== "proposed" ? ` · branch ${p.branch}` : ""}`);
    for (const u of p.unresolved) lines.push(`     unresolved: ${u.issue}: ${u.reason}`);
    if (p.reason && p.status !== "succeeded") lines.push(`     ${p.reason}`);
  }
  lines.push(`${w.turns} turn(s), ${w.tokens} tokens, $${w.cost_usd.toFixed(4)}`);
  lines.push(...s.review.map((r) => `review: ${r}`));
  return `${lines.join("\n")}\n`;
}

/**
 * A plan's words as Markdown text: what would be read as markup (a `<tag>` that would vanish, `*`,
 * backticks, a `|` that would split a table cell) is escaped, and a line break would end the row.
 */
export function markdownText(text: string): string {
  return text.replace(/\r?\n/g, " ").replace(/[\\`*_[\]<>|#&]/g, (c) => `\\${c}`);
}

/** Text inside a code span: a backtick would end it, so the span takes a longer fence. */
function code(text: string): string {
  const flat = text.replace(/\r?\n/g, " ");
  const fence = "`".repeat(Math.max(0, ...(flat.match(/`+/g) ?? []).map((r) => r.length)) + 1);
  return fence.length > 1 ? `${fence} ${flat} ${fence}` : `\`${flat}\``;
}

export function summaryMarkdown(s: ReviewSummary): string {
  const w = s.workflow;
  const rows = s.pulses.map((p) => `| ${p.number} | ${markdownText(p.title)} | ${p.status} | ${p.commit ? `\`${p.commit.slice(0, 8)}\`${p.recovery ? " (recovery)" : ""}` : ""} | ${p.gate ?? ""} | ${p.unresolved.map((u) => markdownText(u.issue)).join("; ")} |`);
  return [
    `# Workflow ${markdownText(w.title)}`,
    "",
    `**${w.status}**${w.reason ? `: ${markdownText(w.reason)}` : ""}. Branch \`${w.branch}\` from \`${w.base}\` (\`${w.base_sha.slice(0, 8)}\`). ${w.turns} turns, ${w.tokens} tokens, $${w.cost_usd.toFixed(4)}.`,
    "",
    "| # | pulse | status | commit | gate | unresolved issues |",
    "| --- | --- | --- | --- | --- | --- |",
    ...rows,
    "",
    "## Baselines",
    "",
    ...s.baselines.commands.map((c) => `- ${code(c.command)}: exit ${c.exit}, ${c.failures} known failure line(s)`),
    ...s.baselines.patterns.map((p) => `- ${markdownText(p.issueType)} (${markdownText(p.source)}): ${code(p.pattern)}${p.filePath ? ` in ${code(p.filePath)}` : ""}`),
    "",
    "## Review",
    "",
    ...s.review.map((r) => `    ${r}`),
    "",
  ].join("\n");
}

/** One line per event worth a line in the terminal. */
export function eventLine(e: WorkflowEvent): string | undefined {
  const d = e as Record<string, unknown>;
  switch (e.type) {
    case "workflow.started":
      return `workflow ${e.workflow_id.slice(0, 8)} started${d.recovered ? ` (${String(d.recovered)})` : ""}`;
    case "preflight.started":
      return "preflight: the agent prepares the worktree";
    case "preflight.finished":
      return d.ok ? `preflight done: ${String(d.summary ?? "")} (${(d.checks as unknown[]).length} check baseline(s), ${String(d.baselines)} pattern baseline(s))` : `preflight failed: ${String(d.reason)}`;
    case "pulse.started":
      return `pulse ${String(d.pulse)}: ${String(d.title)} (branch ${String(d.branch)})`;
    case "turn.finished": {
      const files = (d.files as string[]) ?? [];
      const commit = d.commit ? ` → ${String(d.commit).slice(0, 8)}` : "";
      return `pulse ${String(d.pulse)} turn ${String(d.turn)}: ${String(d.decision)}${commit}${files.length ? ` (${files.length} file${files.length === 1 ? "" : "s"})` : ""}${d.reason && d.decision !== "accept" ? `: ${String(d.reason).split("\n")[0]}` : ""}`;
    }
    case "guidance.steered":
      return `✎ steered by ${String(d.by)} (${d.deferred ? "deferred: applied when it runs again" : `event ${String(d.event_id)}`}): ${JSON.stringify(String(d.text).length > 80 ? `${String(d.text).slice(0, 79)}…` : d.text)}`;
    case "guidance.steer_applied":
      return `✎ deferred steer applied to the guidance (event ${String(d.event_id)})`;
    case "guidance.held":
      return `⏸ guidance changed (${(d.files as string[]).join(", ")}): pulse ${String(d.pulse)} turn ${String(d.turn)} replans first (event ${String(d.event_id)})`;
    case "guidance.acknowledged": {
      const ack = d.ack as { accepted: boolean; event_id: string; plan_sha256: string | null; via: string; reason: string };
      return ack.accepted ? `✓ replan acknowledged (event ${ack.event_id}, plan ${ack.plan_sha256?.slice(0, 12) ?? "missing"}, via ${ack.via})` : `! replan not acknowledged: ${ack.reason}`;
    }
    case "workflow.merged":
      return `--merge ${String(d.mode)}: ${String(d.note)}`;
    case "workflow.finished": {
      const w = d.workflow as WorkflowRecord;
      return `workflow ${w.status}${w.status_reason ? `: ${w.status_reason}` : ""}`;
    }
    default:
      return undefined;
  }
}
