/**
 * Fleet leases in PostgreSQL (src/fleet/contracts.ts). One row per loop and workspace; taking,
 * renewing and taking over are one INSERT … ON CONFLICT DO UPDATE … WHERE, atomic per row, with
 * the database's clock deciding expiry, so hosts whose clocks disagree still agree on the holder.
 */
import type { Lease, LeaseKey, LeaseStore } from "../../src/fleet/contracts.js";
import type { PostgresDatabase } from "./database.js";

interface Row {
  holder: string;
  epoch: string;
  expires_at: number;
  origin: number;
}

const MS = (column: string) => `(extract(epoch FROM ${column}) * 1000)::float8`;

export class PostgresLeases implements LeaseStore {
  constructor(private readonly db: PostgresDatabase) {}

  async acquire(key: LeaseKey, holder: string, ttlMs: number): Promise<Lease | undefined> {
    const t = this.db.table("leases");
    const r = await this.db.pool.query<Row>(
      `INSERT INTO ${t} AS l (loop_id, workspace_id, holder, epoch, expires_at, origin)
       VALUES ($1, $2, $3, 1, clock_timestamp() + make_interval(secs => $4::float8 / 1000), clock_timestamp())
       ON CONFLICT (loop_id, workspace_id) DO UPDATE
         SET holder = EXCLUDED.holder,
             epoch = l.epoch + CASE WHEN l.holder = EXCLUDED.holder THEN 0 ELSE 1 END,
             expires_at = EXCLUDED.expires_at
         WHERE l.holder = EXCLUDED.holder OR l.expires_at < clock_timestamp()
       RETURNING holder, epoch, ${MS("expires_at")} AS expires_at, ${MS("origin")} AS origin`,
      [key.loop_id, key.workspace_id, holder, ttlMs],
    );
    const row = r.rows[0];
    return row ? { ...key, holder: row.holder, epoch: Number(row.epoch), expires_at: row.expires_at, origin: row.origin } : undefined;
  }

  async release(key: LeaseKey, holder: string): Promise<void> {
    await this.db.pool.query(`UPDATE ${this.db.table("leases")} SET expires_at = clock_timestamp() - interval '1 millisecond' WHERE loop_id = $1 AND workspace_id = $2 AND holder = $3`, [key.loop_id, key.workspace_id, holder]);
  }

  async claimTick(key: LeaseKey, scheduledAt: number, holder: string, epoch?: number): Promise<boolean> {
    // The lease is checked in the claim's own statement (as commit_units fences a unit): no
    // takeover can slip between a check and the claim.
    const r = await this.db.pool.query(
      `INSERT INTO ${this.db.table("ticks")} (loop_id, workspace_id, scheduled_at, holder)
       SELECT $1, $2, $3, $4 WHERE $5::bigint IS NULL OR EXISTS (
         SELECT 1 FROM ${this.db.table("leases")} WHERE loop_id = $1 AND workspace_id = $2 AND holder = $4 AND epoch = $5 AND expires_at > clock_timestamp())
       ON CONFLICT DO NOTHING RETURNING 1`,
      [key.loop_id, key.workspace_id, scheduledAt, holder, epoch ?? null],
    );
    return r.rowCount === 1;
  }

  async finishTick(key: LeaseKey, scheduledAt: number): Promise<void> {
    await this.db.pool.query(`UPDATE ${this.db.table("ticks")} SET finished_at = clock_timestamp() WHERE loop_id = $1 AND workspace_id = $2 AND scheduled_at = $3`, [key.loop_id, key.workspace_id, scheduledAt]);
  }

  async unfinishedTicks(key: LeaseKey, exceptHolder: string): Promise<{ scheduled_at: number; holder: string }[]> {
    const r = await this.db.pool.query<{ scheduled_at: string; holder: string }>(
      `SELECT scheduled_at, holder FROM ${this.db.table("ticks")} WHERE loop_id = $1 AND workspace_id = $2 AND finished_at IS NULL AND holder <> $3 ORDER BY scheduled_at`,
      [key.loop_id, key.workspace_id, exceptHolder],
    );
    return r.rows.map((row) => ({ scheduled_at: Number(row.scheduled_at), holder: row.holder }));
  }

  async leases(): Promise<Lease[]> {
    const r = await this.db.pool.query<Row & LeaseKey>(`SELECT loop_id, workspace_id, holder, epoch, ${MS("expires_at")} AS expires_at, ${MS("origin")} AS origin FROM ${this.db.table("leases")} ORDER BY loop_id, workspace_id`);
    return r.rows.map((row) => ({ loop_id: row.loop_id, workspace_id: row.workspace_id, holder: row.holder, epoch: Number(row.epoch), expires_at: row.expires_at, origin: row.origin }));
  }
}
