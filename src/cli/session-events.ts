/**
 * `pulse session logs ID --events`: the session's event stream as kept in the records, in the
 * live view's lines (or JSON lines with --json); with --follow, read on by seq every 250 ms as
 * the runner (in whatever process) writes them, until the session stops running.
 */
import { EVENTS_PAGE } from "../coding/session/records.js";
import type { SessionEvent } from "../coding/session/run-state.js";
import type { SessionService } from "../coding/session/service.js";
import type { CliIO } from "./io.js";
import { sessionSummary, viewLine } from "./session-view.js";

export const FOLLOW_POLL_MS = 250;
/** After the session stops running, how long the runner's last buffered events are waited for. */
const LAST_EVENTS_GRACE_MS = 1500;

export async function printEvents(service: SessionService, id: string, opts: { follow?: boolean; json?: boolean }, io: CliIO): Promise<void> {
  let after = 0;
  let finished = false;
  let stoppedAt: number | undefined;
  for (;;) {
    const page = await service.events(id, after);
    for (const e of page.events) {
      if (e.type === "session.finished") finished = true;
      const line = opts.json ? JSON.stringify(e) : viewLine(e.data as SessionEvent);
      if (line !== undefined) io.stdout(`${line}\n`);
    }
    after = page.next;
    if (page.events.length === EVENTS_PAGE) continue;
    if (!opts.follow || finished) return;
    const s = page.session;
    // A pending session is one a runner is about to take (a detached start): it is waited for.
    if (s.status !== "running" && s.status !== "pending") {
      stoppedAt ??= Date.now();
      // The runner writes its last events as it stops; a runner that died writes none.
      if (Date.now() - stoppedAt > LAST_EVENTS_GRACE_MS) {
        if (!opts.json) io.stdout(`${sessionSummary(s)}\n`);
        return;
      }
    }
    await new Promise((r) => setTimeout(r, FOLLOW_POLL_MS));
  }
}
