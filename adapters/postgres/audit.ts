/**
 * The §9.3 audit substrate in PostgreSQL: a manifest's `audit: "postgres://…?schema=…"` makes every
 * host of a fleet append to one trail that the database keeps append-only (schema.ts: grants and
 * triggers) and isolated per workspace (row-level security). Each workspace's events form a hash
 * chain: an event's hash is BLAKE3 over the previous hash, a newline and the event's RFC 8785
 * canonical JSON, so an event edited, removed or reordered behind the database's back (a
 * superuser disabling the triggers) breaks a link that `verify` reports.
 *
 * Appends to one workspace are serialised by a row lock on its chain head (`audit_chains`), across
 * hosts; appends to different workspaces run side by side. An event appended again with the same
 * content is a replay (answered, not stored twice); other content under a used id is refused.
 */
import { canonicalJson } from "../../src/json/canonical-json.js";
import { chainHash, GENESIS, verifyChain, type ChainCheck as ChainReport } from "../../src/store/audit-chain.js";
import type { AuditEvent, AuditSubstrate, CallContext } from "../../src/substrates/contracts.js";
import { appendedEvent, replayed, traceQuery } from "../memory/audit.js";
import type pg from "pg";
import type { PostgresDatabase } from "./database.js";

export { GENESIS, chainHash };

export interface AuditRow {
  position: string;
  chain_seq: string;
  event_id: string;
  event_type: string;
  trace_id: string;
  loop_id: string;
  phase_id: string | null;
  workspace_id: string;
  timestamp: string;
  signature: string;
  seq: number;
  data: string | null;
  prev_hash: string;
  hash: string;
}

export const AUDIT_COLUMNS = "position, chain_seq, event_id, event_type, trace_id, loop_id, phase_id, workspace_id, timestamp, signature, seq, data, prev_hash, hash";

export function eventOf(r: AuditRow): AuditEvent {
  const e: AuditEvent = { event_id: r.event_id, event_type: r.event_type, trace_id: r.trace_id, loop_id: r.loop_id, phase_id: r.phase_id, workspace_id: r.workspace_id, timestamp: r.timestamp, signature: r.signature, seq: r.seq };
  if (r.data !== null) e.data = JSON.parse(r.data) as Record<string, unknown>;
  return e;
}

export type { ChainCheck as ChainReport } from "../../src/store/audit-chain.js";

export class PostgresAudit implements AuditSubstrate {
  constructor(private readonly db: () => Promise<PostgresDatabase>) {}

  async append_event(args: { event: AuditEvent }, ctx: CallContext): Promise<{ event_id: string }> {
    const event = appendedEvent(args, ctx);
    const db = await this.db();
    return db.inWorkspace(ctx.workspace_id, async (c) => {
      // The directory of workspaces (schema.ts, version 2) lets host-wide reads find this one.
      await c.query(`INSERT INTO ${db.table("workspaces")} (workspace_id) VALUES ($1) ON CONFLICT DO NOTHING`, [ctx.workspace_id]);
      await c.query(`INSERT INTO ${db.table("audit_chains")} (workspace_id, next_seq, head) VALUES ($1, 0, $2) ON CONFLICT DO NOTHING`, [ctx.workspace_id, GENESIS]);
      const head = (await c.query<{ next_seq: string; head: string }>(`SELECT next_seq, head FROM ${db.table("audit_chains")} WHERE workspace_id = $1 FOR UPDATE`, [ctx.workspace_id])).rows[0] as { next_seq: string; head: string };
      const existing = (await c.query<AuditRow>(`SELECT ${AUDIT_COLUMNS} FROM ${db.table("audit_events")} WHERE event_id = $1`, [event.event_id])).rows[0];
      if (existing) return replayed(eventOf(existing), event);
      const hash = chainHash(head.head, event);
      await c.query(
        `INSERT INTO ${db.table("audit_events")} (workspace_id, chain_seq, event_id, event_type, trace_id, loop_id, phase_id, seq, timestamp, signature, data, prev_hash, hash) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
        [ctx.workspace_id, head.next_seq, event.event_id, event.event_type, event.trace_id, event.loop_id, event.phase_id, event.seq, event.timestamp, event.signature, event.data === undefined ? null : canonicalJson(event.data), head.head, hash],
      );
      await c.query(`UPDATE ${db.table("audit_chains")} SET next_seq = next_seq + 1, head = $2 WHERE workspace_id = $1`, [ctx.workspace_id, hash]);
      return { event_id: event.event_id };
    });
  }

  /** The trace's events in this workspace, by seq then append order; since ≤ timestamp ≤ until. */
  async query_by_trace(args: { trace_id: string; since?: string; until?: string }, ctx: CallContext): Promise<AuditEvent[]> {
    const { traceId, within } = traceQuery(args, ctx);
    const db = await this.db();
    const rows = await db.inWorkspace(ctx.workspace_id, (c) => c.query<AuditRow>(`SELECT ${AUDIT_COLUMNS} FROM ${db.table("audit_events")} WHERE trace_id = $1 ORDER BY seq, position`, [traceId]));
    return rows.rows.map(eventOf).filter(within);
  }

  /** Walks a workspace's chain and reports the first broken link (or where it ends early). */
  async verify(workspace: string): Promise<ChainReport> {
    const db = await this.db();
    return db.inWorkspace(workspace, async (c) => (await checkChain(c, db)) ?? { ok: true, events: 0 });
  }
}

/** Walks the chain of the workspace `c`'s transaction is set to; undefined when it has none. */
export async function checkChain(c: pg.ClientBase, db: PostgresDatabase): Promise<ChainReport | undefined> {
  const head = (await c.query<{ next_seq: string; head: string }>(`SELECT next_seq, head FROM ${db.table("audit_chains")}`)).rows[0];
  const rows = (await c.query<AuditRow>(`SELECT ${AUDIT_COLUMNS} FROM ${db.table("audit_events")} ORDER BY chain_seq`)).rows;
  if (!head && rows.length === 0) return undefined;
  const links = rows.map((r) => ({ chain_seq: Number(r.chain_seq), event: eventOf(r), prev_hash: r.prev_hash, hash: r.hash }));
  return verifyChain(links, head ? { next_seq: Number(head.next_seq), hash: head.head } : undefined);
}
