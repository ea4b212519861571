/**
 * A loop's state in one workspace as plain JSON (machine state, iteration count, and the phase
 * and input of an iteration in flight), and back: what a host persists to resume after a crash.
 */
import { PulseError } from "./errors.js";
import type { LoopStepper } from "./machine.js";
import type { WorkspaceState } from "./workspace.js";

export interface LoopSnapshot {
  version: 1;
  loop_id: string;
  workspace_id: string;
  state: ReturnType<LoopStepper["persist"]>;
  iterations: number;
  started: boolean;
  /** The phase an interrupted iteration was in, and its input: resume re-runs that phase. */
  current?: { trace_id: string; phase_id: string; input: unknown };
}

export function snapshotOf(loopId: string, workspaceId: string, ws: WorkspaceState, stepper: LoopStepper): LoopSnapshot {
  const snap: LoopSnapshot = { version: 1, loop_id: loopId, workspace_id: workspaceId, state: stepper.persist(ws.snapshot), iterations: ws.iterations, started: ws.started };
  if (ws.current) snap.current = { trace_id: ws.current.traceId, phase_id: ws.current.phaseId, input: ws.current.input };
  return JSON.parse(JSON.stringify(snap)) as LoopSnapshot;
}

/** Refuses a snapshot of another loop (or none at all) before anything is changed. */
export function checkSnapshot(loopId: string, snapshot: LoopSnapshot): void {
  if (snapshot?.version !== 1 || snapshot.loop_id !== loopId) throw new PulseError("BAD_SNAPSHOT", `snapshot is for ${String(snapshot?.loop_id)}, not loop ${loopId}`);
}

export function restoreInto(ws: WorkspaceState, snapshot: LoopSnapshot, stepper: LoopStepper): void {
  ws.snapshot = stepper.restore(snapshot.state);
  ws.iterations = snapshot.iterations;
  ws.started = snapshot.started;
  ws.current = snapshot.current ? { traceId: snapshot.current.trace_id, phaseId: snapshot.current.phase_id, input: snapshot.current.input } : undefined;
}
