/**
 * How sessions read in a terminal: the live view of a running session (one line per iteration
 * with its signal, commit, files, tokens and cost), `status`, `list` and `logs`.
 */
import type { LedgerEntry } from "../coding/cost-ledger.js";
import type { IterationReceipt } from "../coding/session/records.js";
import type { IterationRecord, SessionRecord } from "../coding/session/records.js";
import type { SessionEvent } from "../coding/session/run-state.js";
import { reviewLines } from "../coding/session/workspace.js";

export function shortId(id: string): string {
  return id.slice(0, 8);
}

function usd(n: number): string {
  return `$${n.toFixed(4)}`;
}

function plural(n: number, word: string): string {
  return `${n.toLocaleString("en-US")} ${word}${n === 1 ? "" : "s"}`;
}

const PRICED: Record<LedgerEntry["costSource"], string> = { driver: "as the agent reported it", price_table: "priced from the model's list price", default_price: "priced at the default rate (model unknown)" };

/** An iteration's receipt: who, tokens by kind, dollars and where the price came from. */
export function receiptLine(r: IterationReceipt): string {
  const u = r.usage;
  const tokens = [`${u.inputTokens.toLocaleString("en-US")} in`, `${u.outputTokens.toLocaleString("en-US")} out`, ...(u.cacheReadTokens ? [`${u.cacheReadTokens.toLocaleString("en-US")} cache read`] : []), ...(u.cacheWriteTokens ? [`${u.cacheWriteTokens.toLocaleString("en-US")} cache write`] : [])];
  return `    receipt: ${r.model ?? r.driver} · ${tokens.join(" / ")} tokens · $${r.costUsd.toFixed(4)}, ${PRICED[r.costSource]}`;
}

export function iterationLine(i: IterationRecord, max: number): string {
  const signal = i.signal ? `${i.signal}${i.signal_source && i.signal_source !== "tag" ? ` (${i.signal_source})` : ""}` : i.status;
  const parts = [`#${i.iteration_number}/${max}`, i.status === "complete" ? signal : `${i.status}, ${signal}`, i.commit_hash ? `commit ${i.commit_hash.slice(0, 8)}` : "no commit", plural(i.files_changed.length, "file"), plural(i.tokens_used, "token"), usd(i.cost_usd)];
  const head = parts.join(" · ");
  const detail = i.error ? i.error : i.signal === "BLOCKED" && i.signal_reason ? `blocked: ${i.signal_reason}` : (i.output_summary ?? "");
  return detail ? `${head}\n    ${detail}` : head;
}

export function sessionHeader(s: SessionRecord): string {
  return `session ${s.id} · ${JSON.stringify(s.goal.length > 80 ? `${s.goal.slice(0, 79)}…` : s.goal)}\n  repo ${s.repo_path}${s.branch_name ? ` (branch ${s.branch_name}${s.worktree_path ? "" : ", in place"})` : s.worktree_path ? "" : " (in place)"} · driver ${s.driver.name} · context ${s.context_strategy} · at most ${s.max_iterations} iterations`;
}

export function sessionSummary(s: SessionRecord): string {
  const what = `${s.status} after ${plural(s.current_iteration, "iteration")}: ${plural(s.total_commits, "commit")}, ${plural(s.total_tokens_used, "token")}, ${usd(s.total_cost_usd)}`;
  return s.status_reason ? `${what}\n  ${s.status_reason}` : what;
}

/** The live view: what each event adds to the terminal. */
export function viewLine(e: SessionEvent): string | undefined {
  switch (e.type) {
    case "session.started":
      return `${sessionHeader(e.session)}${e.resumed ? `\n  resumed at iteration ${e.session.current_iteration + 1}` : ""}${e.recovered ? `\n  ${e.recovered}` : ""}`;
    case "iteration.started":
      return `#${e.iteration}/${e.max} running · anchor ${e.anchor.strategy}${e.anchor.turnId ? ` ${e.anchor.turnId}` : ""}`;
    case "agent":
      return e.event.type === "tool_call" ? `    → ${e.event.call.name}` : e.event.type === "error" ? `    ! ${e.event.kind}: ${e.event.message}` : undefined;
    case "iteration.finished":
      return [iterationLine(e.iteration, 0).replace(/^#(\d+)\/0/, `#$1`), ...(e.receipt ? [receiptLine(e.receipt)] : []), ...e.warnings.map((w) => `    warning: ${w}`)].join("\n");
    case "verify.baseline":
      return e.checks.map((c) => `  baseline \`${c.command}\`: ${c.exit === 0 ? "passes" : `exit ${c.exit}, ${c.failures.length} failure(s) already (a COMPLETE is judged by new ones only)`}`).join("\n");
    case "session.waiting":
      return `  ${e.message}`;
    case "guidance.steered":
      return `  ✎ steered by ${e.by}${e.signal_id ? ` ${e.signal_id} from ${e.signal_source ?? "?"}` : ""} (${e.deferred ? "deferred: applied when it runs again" : `event ${e.event_id}`}): ${JSON.stringify(e.text.length > 80 ? `${e.text.slice(0, 79)}…` : e.text)}`;
    case "guidance.steer_applied":
      return `  ✎ deferred steer applied to the guidance (event ${e.event_id})`;
    case "guidance.held":
      return `  ⏸ guidance changed (${e.files.join(", ")}): iteration ${e.iteration} replans first (event ${e.event_id})`;
    case "guidance.acknowledged":
      return e.ack.accepted ? `  ✓ replan acknowledged (event ${e.ack.event_id}, plan ${e.ack.plan_sha256?.slice(0, 12) ?? "missing"}, via ${e.ack.via})` : `  ! replan not acknowledged: ${e.ack.reason}`;
    case "session.finished":
      return sessionSummary(e.session);
  }
}

export function statusText(s: SessionRecord, iterations: IterationRecord[], live: boolean): string {
  const lines = [sessionHeader(s), `  status ${s.status}${live ? ` (running in process ${s.runner_pid})` : ""}${s.control ? `, ${s.control} requested` : ""} · last signal ${s.last_signal ?? "none"} · created by ${s.created_by} ${s.created_at}`, `  ${sessionSummary(s).replace(/\n {2}/, "\n  ")}`, ...reviewLines(s).map((l) => `  ${l}`)];
  for (const i of iterations) lines.push(`  ${iterationLine(i, s.max_iterations).replace(/\n/g, "\n  ")}`, ...(i.receipt ? [`  ${receiptLine(i.receipt)}`] : []));
  return `${lines.join("\n")}\n`;
}

export function listText(sessions: SessionRecord[]): string {
  if (sessions.length === 0) return "no sessions\n";
  const rows = sessions.map((s) => [shortId(s.id), s.status, `${s.current_iteration}/${s.max_iterations}`, s.last_signal ?? "-", String(s.total_commits), s.updated_at.slice(0, 19).replace("T", " "), s.goal.length > 50 ? `${s.goal.slice(0, 49)}…` : s.goal]);
  const head = ["ID", "STATUS", "ITER", "SIGNAL", "COMMITS", "UPDATED", "GOAL"];
  const widths = head.map((h, k) => Math.max(h.length, ...rows.map((r) => r[k]!.length)));
  const fmt = (r: string[]) => r.map((c, k) => (k === r.length - 1 ? c : c.padEnd(widths[k]!))).join("  ");
  return `${[head, ...rows].map(fmt).join("\n")}\n`;
}

export function logText(s: SessionRecord, i: IterationRecord): string {
  return `── iteration ${i.iteration_number}/${s.max_iterations} · ${i.status}${i.signal ? ` · ${i.signal}` : ""} · anchor ${i.anchor_strategy ?? "-"}${i.anchor_turn_id ? ` ${i.anchor_turn_id}` : ""} · ${i.started_at}\n${i.output_full ?? (i.error ? `(${i.error})` : "(no output yet)")}\n`;
}
