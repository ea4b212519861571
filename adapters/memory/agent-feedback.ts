/** The agent's feedback in memory (`--store memory:` and tests): the same rules as SQLite. */
import { storedOutcome, type FeedbackStore, type FeedbackStored, type StoredFeedback } from "../../src/coding/agent/feedback.js";
import type { Feedback } from "../../src/coding/agent/types.js";

export class MemoryAgentFeedback implements FeedbackStore {
  private readonly rows = new Map<string, StoredFeedback & { seq: number }>();
  private seq = 0;

  async add(feedback: Feedback, about: { action: string; runId: string }): Promise<FeedbackStored> {
    const outcome = storedOutcome(this.rows.get(feedback.actionRunId), feedback);
    if (outcome !== "unchanged") this.rows.set(feedback.actionRunId, { ...feedback, ...about, seq: this.seq++ });
    return outcome;
  }

  async get(actionRunId: string): Promise<StoredFeedback | undefined> {
    const r = this.rows.get(actionRunId);
    if (!r) return undefined;
    const { seq: _seq, ...f } = r;
    return f;
  }

  async recent(limit: number): Promise<StoredFeedback[]> {
    return [...this.rows.values()].sort((a, b) => b.seq - a.seq).slice(0, limit).map(({ seq: _seq, ...f }) => f);
  }

  async close(): Promise<void> {}
}
