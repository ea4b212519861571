/**
 * The runner's checkpoints inside an iteration: when perform_action returns a finished action,
 * its input and output are recorded as the iteration's pending remainder. A pulse that dies
 * before the evaluation resumes the iteration at perform_action, which replays the recorded
 * output instead of running the action again (the act phase completes, so the runtime's
 * feedback path holds), and its feedback (idempotent by actionRunId) is recorded once. Wraps
 * the handlers; changes none.
 */
import type { PhaseHandler } from "../../runtime/handler-context.js";
import type { Acted, AGENT_PHASES } from "./handlers.js";
import type { RunJournal } from "./run-journal.js";

type Handlers = Record<(typeof AGENT_PHASES)[number], PhaseHandler>;

export function checkpointed(handlers: Handlers, journal: RunJournal | undefined, replays: Map<string, unknown>): Handlers {
  if (!journal) return handlers;
  const perform: PhaseHandler = async (ctx) => {
    if (replays.has(ctx.workspace_id)) {
      const recorded = replays.get(ctx.workspace_id);
      replays.delete(ctx.workspace_id);
      return recorded;
    }
    const out = (await handlers.perform_action(ctx)) as Acted;
    // An aborted action (Ctrl-C, the wall time) did not finish: nothing to carry.
    if (out?.result && out.result.ended !== "aborted") await journal.update(ctx.workspace_id, { pending: { entry: "perform_action", input: ctx.input, output: out }, inFlight: null }).catch(() => undefined);
    return out;
  };
  return { ...handlers, perform_action: perform };
}
