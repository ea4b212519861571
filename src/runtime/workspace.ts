/**
 * A loop's state in one workspace (tenant): where its machine stands, how many iterations it ran,
 * the iteration in flight (iterations of one workspace run one at a time), and the acts it
 * committed recently, on which a later learn phase may ground an OutcomeSignal.
 */
import type { AnyMachineSnapshot } from "xstate";
import type { ActRecord } from "./iteration-context.js";

export interface WorkspaceState {
  snapshot: AnyMachineSnapshot;
  iterations: number;
  started: boolean;
  /** The iteration in flight, chained so iterations of one workspace run one at a time. */
  tail: Promise<unknown>;
  /** Acts committed recently (bounded), for learn phases grounded on an OutcomeSignal. */
  actions: Map<string, true>;
  current?: InFlight;
}

/** Where an iteration stands: the phase it is in and that phase's input. */
export interface InFlight {
  traceId: string;
  phaseId: string;
  input: unknown;
  /** For an iteration a journal recovered: the audit seq it continues at, and the phases it committed. */
  recovered?: { auditSeq: number; committed: RecoveredPhase[]; cause?: unknown; complete?: RecoveredPhase };
}

export interface RecoveredPhase {
  phase_id: string;
  signature: string;
  status: string;
  output: unknown;
}

/** How many committed acts a workspace remembers for OutcomeSignal grounding. */
const ACTION_MEMORY = 1024;

export function newWorkspaceState(snapshot: AnyMachineSnapshot): WorkspaceState {
  return { snapshot, iterations: 0, started: false, tail: Promise.resolve(), actions: new Map() };
}

/** Remembers a committed act, forgetting the oldest beyond ACTION_MEMORY. */
export function rememberAct(ws: WorkspaceState, act: ActRecord): void {
  ws.actions.delete(act.action_id);
  ws.actions.set(act.action_id, true);
  if (ws.actions.size > ACTION_MEMORY) ws.actions.delete(ws.actions.keys().next().value as string);
}

/** The agent an iteration acts for: the request's, else the input's agent_id, else the runtime's. */
export function agentOf(explicit: string | undefined, input: unknown, fallback: string): string {
  if (explicit) return explicit;
  const fromInput = (input as { agent_id?: unknown } | null)?.agent_id;
  return typeof fromInput === "string" && fromInput !== "" ? fromInput : fallback;
}
