/**
 * A running session's events written to its records, so that any process (another terminal's
 * `pulse session logs --follow --events`, `pulse serve`'s REST and MCP) reads what the live view
 * shows. Buffered: an agent's text arrives a few characters at a time, and a write per delta
 * would cost more than the turn; events are written at most every `flushMs`, at once when the
 * session finishes, and consecutive text deltas of one turn are kept as one event.
 */
import type { SessionEvent } from "./run-state.js";
import type { NewSessionEventRecord, SessionRecords } from "./records.js";

/** The most one event's data may take as JSON; longer strings in it are cut (marked) to fit. */
export const EVENT_DATA_LIMIT = 16 * 1024;
export const EVENT_FLUSH_MS = 200;

export class SessionEventLog {
  private pending: NewSessionEventRecord[] = [];
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();
  /** Writes this log made (what the buffering saves is visible in tests). */
  writes = 0;
  /** Why a write failed, once: the live view goes on, the stream has a gap. */
  failure: Error | undefined;

  constructor(
    private readonly records: SessionRecords,
    private readonly sessionId: string,
    private readonly flushMs = EVENT_FLUSH_MS,
    private readonly now: () => string = () => new Date().toISOString(),
  ) {}

  push(event: SessionEvent): void {
    const last = this.pending.at(-1);
    if (event.type === "agent" && event.event.type === "text" && last?.type === "agent") {
      const prev = last.data as Extract<SessionEvent, { type: "agent" }>;
      if (prev.event.type === "text" && prev.iteration === event.iteration && prev.event.text.length + event.event.text.length < EVENT_DATA_LIMIT / 2) {
        last.data = { ...prev, event: { type: "text", text: prev.event.text + event.event.text } };
        return;
      }
    }
    this.pending.push({ at: this.now(), type: event.type, data: fitted(event) });
    if (event.type === "session.finished") void this.flush();
    else if (!this.timer) {
      this.timer = setTimeout(() => void this.flush(), this.flushMs);
      this.timer.unref();
    }
  }

  /** Writes what is buffered (after any write under way); never throws. */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.pending;
    this.pending = [];
    if (batch.length === 0) return this.writing;
    this.writing = this.writing.then(async () => {
      try {
        this.writes++;
        await this.records.appendEvents(this.sessionId, batch);
      } catch (e) {
        this.failure ??= e as Error;
      }
    });
    return this.writing;
  }
}

/** The event as JSON data of at most EVENT_DATA_LIMIT: long strings cut shorter until it fits. */
export function fitted(event: SessionEvent): unknown {
  let size = JSON.stringify(event).length;
  if (size <= EVENT_DATA_LIMIT) return event;
  for (let keep = 4096; keep >= 64; keep = Math.floor(keep / 4)) {
    const cut = truncateStrings(event, keep);
    size = JSON.stringify(cut).length;
    if (size <= EVENT_DATA_LIMIT) return cut;
  }
  return { type: event.type, truncated: `the event took ${size} bytes, more than the ${EVENT_DATA_LIMIT} kept` };
}

function truncateStrings(value: unknown, keep: number): unknown {
  if (typeof value === "string") return value.length > keep ? `${value.slice(0, keep)}… [truncated ${value.length - keep} chars]` : value;
  if (Array.isArray(value)) return value.map((v) => truncateStrings(v, keep));
  if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, truncateStrings(v, keep)]));
  return value;
}
