/**
 * Steering a workflow from anywhere (`pulse workflow steer`, REST `POST /api/workflows/:id/steer`,
 * MCP `workflow_steer`): the text goes into the guidance of the workflow's worktree and takes the
 * same pending → ack path as an edit of its `.pulse/guidance.md`: the next pulse turn is held to
 * replan and acknowledge. Without a worktree now (not made yet, or removed), the steer is recorded
 * in the workflow's events and applied when it runs again.
 */
import { steerInto, type SteerOutcome } from "../guidance/deferred.js";
import { steerBySignal, type SignalSteer, type SignalSteerOutcome } from "../guidance/signal-steer.js";
import { isFinished, type WorkflowRecord, type WorkflowRecords } from "./records.js";
import { WorkflowError } from "./runner.js";
import { WorkflowInputError } from "./workspace.js";

export const MAX_WORKFLOW_STEER_CHARS = 20_000;

export interface WorkflowSteered extends SteerOutcome {
  workflow: WorkflowRecord;
}

export function workflowSteerText(text: unknown): string {
  if (typeof text !== "string" || text.trim() === "") throw new WorkflowInputError("text", 'give the guidance to steer the workflow with, e.g. "Keep the public API stable"');
  if (text.length > MAX_WORKFLOW_STEER_CHARS) throw new WorkflowInputError("text", `is ${text.length} characters; at most ${MAX_WORKFLOW_STEER_CHARS}`);
  return text;
}

export async function steerWorkflow(records: WorkflowRecords, id: string, input: unknown, by: "cli" | "api" | "mcp"): Promise<WorkflowSteered> {
  const text = workflowSteerText(input);
  const w = await records.get(id);
  if (!w) throw new WorkflowError("NOT_FOUND", `no workflow ${id}`);
  if (isFinished(w.status)) throw new WorkflowError("FINISHED", `workflow ${w.id} is ${w.status}: there is nothing left to steer`);
  const r = await steerInto(records, w.id, w.worktree_path, text, { workflow_id: w.id, by });
  return { workflow: w, ...r };
}

/** A guidance sidecar's SurpriseSignal: the same steer, once per CloudEvents id (src/coding/guidance/signal-steer.ts). */
export async function steerWorkflowBySignal(records: WorkflowRecords, id: string, signal: SignalSteer): Promise<SignalSteerOutcome & { workflow: WorkflowRecord }> {
  let workflow!: WorkflowRecord;
  const r = await steerBySignal(records, `workflow:${id}`, signal, workflowSteerText(signal.text), async () => {
    const w = await records.get(id);
    if (!w) throw new WorkflowError("NOT_FOUND", `no workflow ${id}`);
    workflow = w;
    return { id: w.id, workdir: w.worktree_path, extra: { workflow_id: w.id }, ...(isFinished(w.status) ? { refusal: new WorkflowError("FINISHED", `workflow ${w.id} is ${w.status}: there is nothing left to steer`) } : {}) };
  });
  return { workflow, ...r };
}
