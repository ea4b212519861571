/**
 * The agent's feedback in SQLite (`pulse_agent_feedback`, its own component `agent_feedback` of
 * `pulse_schema_versions`): one row per action run, replaced only by a person's feedback over the
 * system's implicit one, in one transaction so two writers cannot both insert.
 */
import { storedOutcome, type FeedbackStore, type FeedbackStored, type StoredFeedback } from "../../src/coding/agent/feedback.js";
import type { Feedback } from "../../src/coding/agent/types.js";
import { VERSION } from "../../src/version.js";
import { openDatabase, storeError, type Database } from "./driver.js";
import { migrateComponent } from "./schema-versions.js";

const MIGRATIONS = [
  `CREATE TABLE pulse_agent_feedback (
    action_run_id TEXT PRIMARY KEY, run_id TEXT NOT NULL, action TEXT NOT NULL, score REAL NOT NULL,
    signal TEXT NOT NULL, submitted_by TEXT NOT NULL, ts TEXT NOT NULL, body TEXT NOT NULL, stored_seq INTEGER NOT NULL
  ) STRICT;
  CREATE INDEX pulse_agent_feedback_recent ON pulse_agent_feedback (stored_seq);`,
];

interface Row {
  run_id: string;
  action: string;
  body: string;
}

export class SqliteAgentFeedback implements FeedbackStore {
  private constructor(
    private readonly db: Database,
    readonly path: string,
  ) {}

  static open(path: string): SqliteAgentFeedback {
    const db = openDatabase(path);
    try {
      migrateComponent(db, path, "agent_feedback", MIGRATIONS, `pulse ${VERSION}`);
    } catch (error) {
      db.close();
      throw storeError(path, error);
    }
    return new SqliteAgentFeedback(db, path);
  }

  private run<T>(fn: () => T): T {
    try {
      return fn();
    } catch (error) {
      throw storeError(this.path, error);
    }
  }

  private row(r: Row | undefined): StoredFeedback | undefined {
    return r ? { ...(JSON.parse(r.body) as Feedback), action: r.action, runId: r.run_id } : undefined;
  }

  async add(feedback: Feedback, about: { action: string; runId: string }): Promise<FeedbackStored> {
    return this.run(() =>
      this.db
        .transaction(() => {
          const existing = this.row(this.db.prepare("SELECT run_id, action, body FROM pulse_agent_feedback WHERE action_run_id = ?").get(feedback.actionRunId) as Row | undefined);
          const outcome = storedOutcome(existing, feedback);
          if (outcome === "unchanged") return outcome;
          const seq = ((this.db.prepare("SELECT COALESCE(MAX(stored_seq), 0) AS m FROM pulse_agent_feedback").get() as { m: number }).m ?? 0) + 1;
          this.db
            .prepare("INSERT OR REPLACE INTO pulse_agent_feedback (action_run_id, run_id, action, score, signal, submitted_by, ts, body, stored_seq) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")
            .run(feedback.actionRunId, existing?.runId ?? about.runId, existing?.action ?? about.action, feedback.score, feedback.signal, feedback.submittedBy, feedback.ts, JSON.stringify(feedback), seq);
          return outcome;
        })
        .immediate(),
    );
  }

  async get(actionRunId: string): Promise<StoredFeedback | undefined> {
    return this.run(() => this.row(this.db.prepare("SELECT run_id, action, body FROM pulse_agent_feedback WHERE action_run_id = ?").get(actionRunId) as Row | undefined));
  }

  async recent(limit: number): Promise<StoredFeedback[]> {
    return this.run(() => (this.db.prepare("SELECT run_id, action, body FROM pulse_agent_feedback ORDER BY stored_seq DESC LIMIT ?").all(limit) as Row[]).map((r) => this.row(r)!));
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}
