/**
 * The loop as an XState v5 machine generated from its manifest. Two parallel regions:
 *   status:    active | paused | degraded | stopped       (the loop)
 *   iteration: idle | <one state per phase, declared order> (where the current iteration is)
 * Route phases redirect through their outputs.to targets (§5.3); the closure phase returns the
 * iteration to idle, and the next iteration enters at closure.to_phase.
 *
 * The machine has no context and no actions: it is a pure description of legal moves. Side
 * effects (handlers, substrates, audit) happen at the edge, in the executor, which asks the
 * machine for every move. XState computes each distinct (state, event) move once; `step`
 * memoises it, because a transition costs ~10 µs and a phase's whole budget is ~20 µs.
 */
import { createMachine, initialTransition, transition, type AnyMachineSnapshot, type StateMachine } from "xstate";
import type { CompiledLoop } from "./compiled-loop.js";

export type LoopEvent =
  | { type: "ITERATION_START"; entry: string }
  | { type: "PHASE_DONE"; next?: string }
  | { type: "ITERATION_END" }
  | { type: "PAUSE" }
  | { type: "RESUME" }
  | { type: "DEGRADE" }
  | { type: "RECOVER" }
  | { type: "STOP" };

export type LoopStatus = "idle" | "running" | "paused" | "degraded" | "stopped";

const IDLE = "idle";

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type LoopMachine = StateMachine<any, any, any, any, any, any, any, any, any, any, any, any, any, any>;

export function buildLoopMachine(loop: CompiledLoop): LoopMachine {
  const phaseStates: Record<string, object> = {};
  for (const phase of loop.phases) {
    const after = phase.next ?? IDLE;
    const routes = phase.routeTargets.filter((t) => loop.byId.has(t)).map((target) => ({ guard: ({ event }: { event: LoopEvent }) => event.type === "PHASE_DONE" && event.next === target, target }));
    phaseStates[phase.id] = { on: { PHASE_DONE: [...routes, { target: after }], ITERATION_END: IDLE } };
  }
  const entries = loop.phases.map((p) => ({ guard: ({ event }: { event: LoopEvent }) => event.type === "ITERATION_START" && event.entry === p.id, target: p.id }));
  // The guards read only the event; XState's config types cannot see that through a generated
  // object, hence the cast on the config.
  return createMachine({
    id: loop.loopId,
    type: "parallel",
    states: {
      status: {
        initial: "active",
        states: {
          active: { on: { PAUSE: "paused", DEGRADE: "degraded", STOP: "stopped" } },
          paused: { on: { RESUME: "active", STOP: "stopped" } },
          degraded: { on: { RECOVER: "active", PAUSE: "paused", STOP: "stopped" } },
          stopped: { type: "final" },
        },
      },
      iteration: {
        initial: IDLE,
        states: { [IDLE]: { on: { ITERATION_START: entries } }, ...phaseStates },
      },
    },
  } as never) as unknown as LoopMachine;
}

export interface LoopStateValue {
  status: "active" | "paused" | "degraded" | "stopped";
  iteration: string;
}

/** Memoised pure transitions over a loop machine. */
export class LoopStepper {
  readonly initial: AnyMachineSnapshot;
  private readonly memo = new Map<string, Map<string, Map<string, AnyMachineSnapshot>>>();
  private readonly keys = new WeakMap<AnyMachineSnapshot, string>();

  constructor(readonly machine: LoopMachine) {
    this.initial = initialTransition(machine)[0];
  }

  private keyOf(snapshot: AnyMachineSnapshot): string {
    let key = this.keys.get(snapshot);
    if (key === undefined) {
      const v = snapshot.value as unknown as LoopStateValue;
      key = `${v.status} ${v.iteration}`;
      this.keys.set(snapshot, key);
    }
    return key;
  }

  step(snapshot: AnyMachineSnapshot, event: LoopEvent): AnyMachineSnapshot {
    const detail = event.type === "ITERATION_START" ? event.entry : event.type === "PHASE_DONE" ? (event.next ?? "") : "";
    // Keyed by state, event type and detail in turn: strings whose hashes are already known,
    // where one key joined per step would be a new string to hash every phase.
    const state = this.keyOf(snapshot);
    let byType = this.memo.get(state);
    if (byType === undefined) this.memo.set(state, (byType = new Map()));
    let byDetail = byType.get(event.type);
    if (byDetail === undefined) byType.set(event.type, (byDetail = new Map()));
    let next = byDetail.get(detail);
    if (next === undefined) {
      next = transition(this.machine, snapshot, event)[0];
      byDetail.set(detail, next);
    }
    return next;
  }

  /** Whether the machine accepts the event in this state (an ignored event leaves it unchanged). */
  accepts(snapshot: AnyMachineSnapshot, event: LoopEvent): boolean {
    return this.step(snapshot, event) !== snapshot || this.keyOf(this.step(snapshot, event)) !== this.keyOf(snapshot);
  }

  value(snapshot: AnyMachineSnapshot): LoopStateValue {
    return snapshot.value as unknown as LoopStateValue;
  }

  status(snapshot: AnyMachineSnapshot): LoopStatus {
    const v = this.value(snapshot);
    if (v.status !== "active") return v.status;
    return v.iteration === IDLE ? "idle" : "running";
  }

  /** The phase the iteration is in, or undefined when idle. */
  phase(snapshot: AnyMachineSnapshot): string | undefined {
    const it = this.value(snapshot).iteration;
    return it === IDLE ? undefined : it;
  }

  persist(snapshot: AnyMachineSnapshot): { value: LoopStateValue } {
    return { value: { ...this.value(snapshot) } };
  }

  restore(persisted: { value: LoopStateValue }): AnyMachineSnapshot {
    const value = persisted.value;
    const statuses = ["active", "paused", "degraded", "stopped"];
    if (!value || !statuses.includes(value.status) || (value.iteration !== IDLE && !(this.machine.root.states.iteration?.states ?? {})[value.iteration])) {
      throw new Error(`snapshot does not fit this loop: state ${JSON.stringify(value)}`);
    }
    return this.machine.resolveState({ value: value as unknown as Record<string, string>, context: {} });
  }
}
