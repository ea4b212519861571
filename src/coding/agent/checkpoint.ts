/**
 * The runner's checkpoints inside an iteration: when perform_action returns a finished action,
 * its output is recorded as the iteration's pending remainder, so a pulse that dies before the
 * evaluation resumes at evaluate_progress with it: the action is not run again, and its
 * feedback (idempotent by actionRunId) is recorded once. Wraps the handlers; changes none.
 */
import type { PhaseHandler } from "../../runtime/handler-context.js";
import type { Acted, AGENT_PHASES } from "./handlers.js";
import type { RunJournal } from "./run-journal.js";

type Handlers = Record<(typeof AGENT_PHASES)[number], PhaseHandler>;

export function checkpointed(handlers: Handlers, journal: RunJournal | undefined): Handlers {
  if (!journal) return handlers;
  const perform: PhaseHandler = async (ctx) => {
    const out = (await handlers.perform_action(ctx)) as Acted;
    // An aborted action (Ctrl-C, the wall time) did not finish: nothing to carry.
    if (out?.result && out.result.ended !== "aborted") await journal.update(ctx.workspace_id, { pending: { entry: "evaluate_progress", input: out }, inFlight: null }).catch(() => undefined);
    return out;
  };
  return { ...handlers, perform_action: perform };
}
