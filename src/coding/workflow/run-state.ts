/**
 * What the workflow's phase handlers share within one process, per running workflow (the
 * workspace of its iterations): its record, drivers, ledger, abort, checks and where events go.
 * An iteration's own data goes from phase to phase in their outputs, never through here.
 */
import type { AgentDriver } from "../../agents/contract.js";
import type { AgentProcesses } from "../agent-processes.js";
import type { CostLedger } from "../cost-ledger.js";
import type { CheckRunner } from "../gate.js";
import type { GuidanceGate } from "../guidance/gate.js";
import type { WorkflowProfile } from "./profile.js";
import type { WorkflowRecord, WorkflowRecords } from "./records.js";

export interface WorkflowEvent {
  type: string;
  workflow_id: string;
  [key: string]: unknown;
}

export interface WorkflowRun {
  workflow: WorkflowRecord;
  records: WorkflowRecords;
  profile: WorkflowProfile;
  /** The preflight's agent (shell and record_baseline) and the pulses' (the full tool set). */
  driverFor(phase: "preflight" | "run_pulse"): AgentDriver;
  ledger: CostLedger;
  /** Aborting it stops the agent and the checks at once. */
  controller: AbortController;
  checks: CheckRunner;
  processes?: AgentProcesses;
  /** The guidance gate of the workflow's worktree (its `.pulse/`), opened at the first pulse turn. */
  guidance?: GuidanceGate;
  /** Why the run is being stopped (stop request, a signal to pulse). */
  stopping?: string;
  emit(event: WorkflowEvent): void;
}

export type WorkflowRuns = Map<string, WorkflowRun>;
