/**
 * The agent processes a session has running, in the PostgreSQL store (`pulse_agent_processes`,
 * migration 2 of the session tables' track, session-schema.ts): recorded by the runner as each
 * starts, read by the reaper of a later pulse after that runner died. It works over the session
 * records' connection pool, which it does not own (close leaves it to them).
 */
import type { SpawnInfo } from "../../src/agents/contract.js";
import type { AgentProcessRecord, AgentProcesses } from "../../src/coding/agent-processes.js";
import type { PostgresDatabase } from "./database.js";

interface Row {
  session_id: string;
  iteration: number;
  pid: number;
  pgid: number;
  start_time: string | number;
  marker: string;
  runner_pid: number;
  recorded_at: string;
}

export class PostgresAgentProcesses implements AgentProcesses {
  private readonly table: string;

  constructor(
    private readonly db: PostgresDatabase,
    /** Turns a pg failure into the store's one-line error. */
    private readonly run: <T>(fn: () => Promise<T>) => Promise<T>,
  ) {
    this.table = db.table("pulse_agent_processes");
  }

  async record(sessionId: string, iteration: number, info: SpawnInfo): Promise<void> {
    await this.run(() =>
      this.db.pool.query(
        `INSERT INTO ${this.table} (session_id, iteration, pid, pgid, start_time, marker, runner_pid, recorded_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
         ON CONFLICT (session_id, marker) DO UPDATE SET iteration = EXCLUDED.iteration, pid = EXCLUDED.pid, pgid = EXCLUDED.pgid, start_time = EXCLUDED.start_time, runner_pid = EXCLUDED.runner_pid, recorded_at = EXCLUDED.recorded_at`,
        [sessionId, iteration, info.pid, info.pgid, info.startTime, info.marker, process.pid, new Date().toISOString()],
      ),
    );
  }

  async remove(sessionId: string, iteration?: number): Promise<void> {
    await this.run(() =>
      iteration === undefined
        ? this.db.pool.query(`DELETE FROM ${this.table} WHERE session_id = $1`, [sessionId])
        : this.db.pool.query(`DELETE FROM ${this.table} WHERE session_id = $1 AND iteration = $2`, [sessionId, iteration]),
    );
  }

  async list(sessionId: string): Promise<AgentProcessRecord[]> {
    const rows = await this.run(async () => (await this.db.pool.query(`SELECT session_id, iteration, pid, pgid, start_time, marker, runner_pid, recorded_at FROM ${this.table} WHERE session_id = $1 ORDER BY recorded_at, seq`, [sessionId])).rows as Row[]);
    return rows.map((r) => ({ session_id: r.session_id, iteration: r.iteration, pid: r.pid, pgid: r.pgid, startTime: Number(r.start_time), marker: r.marker, runner_pid: r.runner_pid, recorded_at: r.recorded_at }));
  }

  async runs(): Promise<string[]> {
    return this.run(async () => ((await this.db.pool.query(`SELECT DISTINCT session_id FROM ${this.table} ORDER BY session_id`)).rows as { session_id: string }[]).map((r) => r.session_id));
  }

  async close(): Promise<void> {}
}
