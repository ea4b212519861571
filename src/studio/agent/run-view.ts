/**
 * One agent run as the Working page shows it, from its events (live, or its report read back):
 * the task, the latest plan, a line per step of progress, each action's result, and how it
 * ended. A run with no `run_finished` that no runner of this process holds was cut off (its
 * pulse stopped or died): it is shown `interrupted`, never `running`.
 */
import { readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import type { Envelope, Plan } from "../../coding/agent/types.js";

export interface RunView {
  runId: string;
  status: string;
  reason: string | null;
  message: string | null;
  request: string | null;
  started_at: string | null;
  finished_at: string | null;
  plan: Plan | null;
  progress: { ts: string; type: string; text: string }[];
  actions: { actionRunId: string; name: string; status: string; result: string; error: string | null; ended: string | null }[];
  last: string | null;
}

const cut = (v: unknown, n = 2000): string => {
  const s = typeof v === "string" ? v : v === undefined || v === null ? "" : JSON.stringify(v);
  return s.length > n ? `${s.slice(0, n)}… (${s.length - n} more characters)` : s;
};

/** One line saying what an event was (the status bar's text). */
export function describe(e: Envelope): string {
  const p = e.payload as Record<string, any>;
  switch (e.type) {
    case "run_started":
      return `run started (${p.mode}; actions ${(p.actions ?? []).join(", ") || "none"})`;
    case "user_request":
      return `request: ${cut(p.text, 200)}`;
    case "plan_built":
    case "plan_updated":
      return `plan ${e.type === "plan_built" ? "built" : "updated"}: ${((p.plan?.steps ?? []) as { id: string; desc: string; status: string }[]).map((s) => `${s.id} ${s.desc} [${s.status}]`).join(" → ")}`;
    case "decision": {
      const d = p.decision ?? {};
      return `decision: ${d.type}${d.action ? ` ${d.action.name} ${cut(d.action.args, 200)}` : ""}${d.reason ? ` (${cut(d.reason, 200)})` : ""}`;
    }
    case "action_started":
      return `action ${p.name} started`;
    case "action_result":
      return `action ${p.name} → ${p.status}: ${cut(p.status === "ok" ? p.result : (p.error ?? p.result), 300)}`;
    case "feedback_received":
      return `feedback on ${p.action}: ${p.feedback?.score}/5 ${p.feedback?.signal} (${p.feedback?.submittedBy})`;
    case "progress_evaluated":
      return `progress ${p.progress?.done ?? "?"}/${p.progress?.total ?? "?"} done · ${p.status}${p.reason && p.reason !== "in_progress" ? ` (${p.reason})` : ""}`;
    case "task_interrupted":
      return `interrupted: ${p.reason}`;
    case "run_summary":
      return `summary: ${p.actionsOk ?? 0} ok, ${p.actionsFailed ?? 0} failed`;
    case "run_finished":
      return `run ${p.status} (${p.reason})${p.message ? `: ${cut(p.message, 300)}` : ""}`;
    default:
      return e.type;
  }
}

export function runView(runId: string, events: readonly Envelope[], live: boolean): RunView {
  const v: RunView = { runId, status: live ? "running" : "interrupted", reason: null, message: null, request: null, started_at: null, finished_at: null, plan: null, progress: [], actions: [], last: null };
  for (const e of events) {
    const p = e.payload as Record<string, any>;
    v.last = `${e.ts} · ${describe(e)}`;
    if (e.type === "run_started") v.started_at = e.ts;
    else if (e.type === "user_request") v.request = typeof p.text === "string" ? p.text : null;
    else if ((e.type === "plan_built" || e.type === "plan_updated") && p.plan) v.plan = p.plan as Plan;
    else if (e.type === "action_result") v.actions.push({ actionRunId: String(p.actionRunId ?? ""), name: String(p.name ?? "?"), status: String(p.status ?? "?"), result: cut(p.result), error: p.error ? cut(p.error) : null, ended: typeof p.ended === "string" ? p.ended : null });
    else if (e.type === "run_finished") {
      v.status = String(p.status);
      v.reason = typeof p.reason === "string" ? p.reason : null;
      v.message = typeof p.message === "string" ? p.message : null;
      v.finished_at = e.ts;
    }
    if (e.type !== "run_summary" && e.type !== "run_started") v.progress.push({ ts: e.ts, type: e.type, text: describe(e) });
  }
  return v;
}

const SKIP = new Set([".git", "node_modules", ".pulse"]);

/**
 * Files under `workdir` written while a run ran (modified from its start to its end): what it
 * generated or edited. Bounded: 8 levels, 5,000 entries, dot-folders and node_modules skipped.
 */
export function touchedFiles(workdir: string, fromMs: number, toMs: number): { path: string; rel: string; size: number; modified: string }[] {
  const out: { path: string; rel: string; size: number; modified: string }[] = [];
  let seen = 0;
  const walk = (dir: string, depth: number) => {
    if (depth > 8) return;
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return;
    }
    for (const name of names.sort()) {
      if (++seen > 5000) return;
      if (SKIP.has(name) || name.startsWith(".")) continue;
      const path = join(dir, name);
      let st;
      try {
        st = statSync(path);
      } catch {
        continue;
      }
      if (st.isDirectory()) walk(path, depth + 1);
      else if (st.isFile() && st.mtimeMs >= fromMs && st.mtimeMs <= toMs) out.push({ path, rel: relative(workdir, path), size: st.size, modified: new Date(st.mtimeMs).toISOString() });
    }
  };
  walk(workdir, 0);
  return out;
}
