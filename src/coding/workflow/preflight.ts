/**
 * The preflight phase (run once, the first iteration's entry): the agent, limited to the shell
 * and record_baseline, prepares the worktree and ends with preflight_done; pulse then checks
 * with git that no tracked file changed (and no commit was made), takes the verification
 * commands' baselines, and records seed 001's PreflightSetup and PreflightBaseline. A failure
 * is the phase's output (`ok: false` and why), which the later phases carry to the route.
 */
import { randomUUID } from "node:crypto";
import type { PhaseContext } from "../../runtime/handler-context.js";
import type { AgentResult, ToolCall } from "../../agents/contract.js";
import { recordProcesses } from "../agent-processes.js";
import { isToolCall, PREFLIGHT_DONE_TOOL, RECORD_BASELINE_TOOL } from "../completion-tools.js";
import { baselineOf, type PatternBaseline } from "../gate.js";
import { phaseAuditSink } from "../audit-sink.js";
import { git } from "../git.js";
import { trackedChanges, untrackedPaths } from "./branches.js";
import { WORKFLOW_LOOP_ID } from "./profile.js";
import { preflightPrompt } from "./prompt.js";
import type { PreflightBaseline, PreflightSetup } from "./records.js";
import type { WorkflowRun } from "./run-state.js";

export interface PreflightResult {
  workflow_id: string;
  ok: boolean;
  /** Why the preflight failed (the workflow is abandoned). */
  reason?: string;
  /** Already done by an earlier run: nothing was run again. */
  skipped?: boolean;
}

const SOURCES = ["Build", "Lint", "Test"];

function baselinesOf(calls: readonly ToolCall[], workflowId: string): PreflightBaseline[] {
  return calls
    .filter((c) => isToolCall(c.name, RECORD_BASELINE_TOOL.name) && typeof c.arguments.pattern === "string" && c.arguments.pattern.trim())
    .map((c) => {
      const a = c.arguments;
      const b: PreflightBaseline = { id: randomUUID(), workflow_id: workflowId, issueType: a.issueType === "Warning" ? "Warning" : "Error", source: (SOURCES.includes(String(a.source)) ? a.source : "Build") as PatternBaseline["source"], pattern: String(a.pattern).trim() };
      if (typeof a.filePath === "string" && a.filePath) b.filePath = a.filePath;
      if (typeof a.description === "string" && a.description) b.description = a.description;
      return b;
    });
}

export async function runPreflight(ctx: PhaseContext, run: WorkflowRun): Promise<PreflightResult> {
  const w = run.workflow;
  const done = await run.records.preflight(w.id);
  if (done?.status === "completed") return { workflow_id: w.id, ok: true, skipped: true };
  const now = () => new Date().toISOString();
  let setup: PreflightSetup = await run.records.putPreflight({ id: done?.id ?? randomUUID(), workflow_id: w.id, status: "running", progress_message: "the agent is preparing the worktree", error_message: null, summary: null, setup_commands: [], build_success: null, created_at: done?.created_at ?? now(), completed_at: null });
  run.emit({ type: "preflight.started", workflow_id: w.id });
  const fail = async (reason: string): Promise<PreflightResult> => {
    setup = await run.records.putPreflight({ ...setup, status: "failed", error_message: reason, progress_message: null, completed_at: now() });
    run.emit({ type: "preflight.finished", workflow_id: w.id, ok: false, reason });
    return { workflow_id: w.id, ok: false, reason };
  };

  const driver = run.driverFor("preflight");
  const calls: ToolCall[] = [];
  let finished: ToolCall | undefined;
  let nudge: string | undefined;
  for (let attempt = 0; attempt <= run.profile.limits.maxNudges && !finished; attempt++) {
    const recording = await recordProcesses(run.processes, w.id, 0, "pulse-workflow");
    let result: AgentResult;
    try {
      result = await driver.run(
        { prompt: preflightPrompt(w, nudge), cwd: w.worktree_path, loopId: WORKFLOW_LOOP_ID, phaseId: "preflight", iteration: attempt + 1, timeoutMs: run.profile.preflight.timeoutMs, terminalTools: [RECORD_BASELINE_TOOL, PREFLIGHT_DONE_TOOL], ...(w.driver.model ? { model: w.driver.model } : {}) },
        { signal: AbortSignal.any([run.controller.signal, ctx.signal]), onEvent: (event) => run.emit({ type: "agent", workflow_id: w.id, phase: "preflight", event }), onSpawn: recording.onSpawn, marker: recording.marker },
      );
    } finally {
      await recording.done();
    }
    const entry = await run.ledger.record({ loopId: WORKFLOW_LOOP_ID, sessionId: w.id, iteration: 0, driver: driver.name, ...(result.model ? { model: result.model } : {}), ...(result.usage ? { usage: result.usage } : {}), ...(result.costUsd !== undefined ? { costUsd: result.costUsd } : {}) }, phaseAuditSink(ctx));
    run.workflow = await run.records.update(w.id, { total_tokens_used: run.workflow.total_tokens_used + entry.tokens, total_cost_usd: run.workflow.total_cost_usd + entry.costUsd });
    if (result.status !== "ok") return fail(`the preflight agent's turn ended ${result.status}${result.error ? `: ${result.error.message}` : ""}`);
    calls.push(...result.toolCalls);
    finished = result.toolCalls.find((c) => isToolCall(c.name, PREFLIGHT_DONE_TOOL.name));
    nudge = "You ended your turn without calling preflight_done: finish the setup and call it.";
  }
  if (!finished) return fail(`the preflight agent never called preflight_done (${run.profile.limits.maxNudges} reminders)`);

  // "Preflight must not modify tracked files": checked, not only asked for.
  const touched = await trackedChanges(w.worktree_path);
  const moved = (await git(w.worktree_path, ["rev-parse", "HEAD"])).stdout.trim() !== w.base_sha;
  if (touched.length > 0 || moved) {
    const files = moved ? (await git(w.worktree_path, ["diff", "--name-only", w.base_sha])).stdout.split("\n").filter(Boolean) : touched;
    return fail(`the preflight modified tracked files (${files.join(", ") || "a commit"}): a preflight may only create untracked artifacts`);
  }
  const a = finished.arguments;
  const verification = Array.isArray(a.verificationCommands) ? a.verificationCommands.filter((c): c is string => typeof c === "string" && c.trim() !== "") : [];
  const checks = [...new Set([...w.verify.checks, ...verification])];
  const patterns = baselinesOf(calls, w.id);
  await run.records.addBaselines(patterns);

  // Each verification command's baseline: what a pulse is not blamed for.
  const recording = await recordProcesses(run.processes, w.id, 0, "pulse-workflow");
  const runs = await run.checks(checks, { cwd: w.worktree_path, timeoutMs: run.profile.validate.checksTimeoutMs, signal: run.controller.signal, onSpawn: recording.onSpawn, marker: recording.marker }).finally(recording.done);
  if (run.controller.signal.aborted) return fail("stopped during the preflight");
  const baseline = runs.map(baselineOf);
  // What the preflight made (node_modules, build output) never goes into a pulse's commit.
  const artifacts = await untrackedPaths(w.worktree_path);
  run.workflow = await run.records.update(w.id, { verify: { checks, baseline }, artifacts });
  setup = await run.records.putPreflight({
    ...setup,
    status: "completed",
    progress_message: null,
    summary: typeof a.summary === "string" ? a.summary : null,
    setup_commands: Array.isArray(a.setupCommands) ? a.setupCommands.map(String) : [],
    build_success: typeof a.buildSuccess === "boolean" ? a.buildSuccess : null,
    completed_at: now(),
  });
  run.emit({ type: "preflight.finished", workflow_id: w.id, ok: true, summary: setup.summary, checks: baseline, baselines: patterns.length, artifacts });
  return { workflow_id: w.id, ok: true };
}
