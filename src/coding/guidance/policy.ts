/**
 * When the agent must stop and replan, and which acknowledgement is accepted (seed 004's later
 * event-id policy, not its first mtime comparison): changes of `guidance.md` and
 * `constraints.md` invalidate the plan; a change of `plan.md` (or `task.md`) alone does not
 * clear the interrupt. The pending event is the latest invalidating event after the last
 * acknowledged one, and only it is accepted: a missing, unknown, non-invalidating or stale id
 * is refused with the reason. Pure functions of the ledger and the state.
 */
import { eventsAfter, type GuidanceEvent } from "./events.js";
import type { GuidanceState } from "./state.js";

export const INVALIDATING_PATHS: readonly string[] = [".pulse/guidance.md", ".pulse/constraints.md"];

export function isPlanInvalidating(e: Pick<GuidanceEvent, "path">): boolean {
  return INVALIDATING_PATHS.includes(e.path);
}

/** `pulse_should_interrupt`'s answer, field for field as the seed returns it. */
export interface InterruptDecision {
  needs_replan: boolean;
  latest_event_id: string | null;
  has_new_events: boolean;
  changed_files: string[];
  pending_replan_event_id: string | null;
  pending_replan_files: string[];
  last_acknowledged_event_id: string | null;
  last_acknowledged_plan_sha256: string | null;
  reason: string;
}

/** `pulse_ack_replan`'s answer, field for field as the seed returns it. */
export interface AckDecision {
  accepted: boolean;
  acknowledged_event_id: string | null;
  plan_sha256: string | null;
  reason: string;
}

/** The plan-invalidating events not yet acknowledged, oldest first. */
export function pendingEvents(events: readonly GuidanceEvent[], acknowledged: string | null): GuidanceEvent[] {
  let start = 0;
  if (acknowledged !== null) {
    const i = events.findIndex((e) => e.id === acknowledged);
    if (i >= 0) start = i + 1;
  }
  return events.slice(start).filter(isPlanInvalidating);
}

export function shouldInterrupt(events: readonly GuidanceEvent[], state: Pick<GuidanceState, "last_acknowledged_event_id" | "last_acknowledged_plan_sha256">, lastSeen?: string | null): InterruptDecision {
  const fresh = eventsAfter(events, lastSeen);
  const pending = pendingEvents(events, state.last_acknowledged_event_id);
  const current = pending.at(-1) ?? null;
  const reason = current
    ? "User guidance or constraints changed and have not been acknowledged. The agent should review the pulse context (pulse://context/latest), update .pulse/plan.md, and call pulse_ack_replan with pending_replan_event_id before continuing."
    : fresh.length > 0
      ? "pulse saw new events, but there is no pending guidance or constraints change requiring a replan."
      : "No new events and no pending replan acknowledgement.";
  return {
    needs_replan: current !== null,
    latest_event_id: events.at(-1)?.id ?? null,
    has_new_events: fresh.length > 0,
    changed_files: fresh.map((e) => e.path),
    pending_replan_event_id: current?.id ?? null,
    pending_replan_files: [...new Set(pending.map((e) => e.path))],
    last_acknowledged_event_id: state.last_acknowledged_event_id,
    last_acknowledged_plan_sha256: state.last_acknowledged_plan_sha256,
    reason,
  };
}

/**
 * Judges an acknowledgement: accepted only for the current pending event, and then recorded
 * with `planSha256` (what plan.md holds at that moment). A refusal leaves the state as it was.
 */
export function judgeAck(events: readonly GuidanceEvent[], state: Pick<GuidanceState, "last_acknowledged_event_id" | "last_acknowledged_plan_sha256">, eventId: string | null | undefined, planSha256: string | null): AckDecision {
  const refuse = (reason: string, keep = false): AckDecision => ({ accepted: false, acknowledged_event_id: keep ? state.last_acknowledged_event_id : null, plan_sha256: keep ? state.last_acknowledged_plan_sha256 : null, reason });
  if (eventId === undefined || eventId === null || eventId.trim() === "") return refuse("A pending replan event id is required.");
  const event = events.find((e) => e.id === eventId);
  if (!event) return refuse(`Event ${eventId} was not found.`);
  if (!isPlanInvalidating(event)) return refuse(`Event ${eventId} is not a guidance or constraints event.`);
  const current = pendingEvents(events, state.last_acknowledged_event_id).at(-1);
  if (!current) return refuse("There is no pending guidance or constraints change to acknowledge.");
  if (current.id !== event.id) return refuse(`Event ${eventId} is stale. Acknowledge the latest pending replan event ${current.id} instead.`, true);
  return { accepted: true, acknowledged_event_id: event.id, plan_sha256: planSha256, reason: "Replan acknowledged for the latest guidance or constraints event." };
}
