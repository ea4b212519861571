/**
 * Units of work that append audit events, written per workspace in order: each event's hash
 * covers the previous one's, so a workspace's units must reach the database one after the other.
 * A host keeps at most one transaction per workspace in flight and sends the units that queued
 * meanwhile together in the next one (a group commit): 4 loops in one workspace then cost one
 * round trip per batch instead of one per unit waiting in line. Each unit is still whole or
 * absent: a batch that fails is sent again unit by unit, so only the failing unit is refused.
 *
 * A batch is hashed from the head the host expects (what its last batch left) and the database
 * moves the head only from there (advance_chain, schema.ts). When another host moved it first,
 * the batch is sent again under the head's row lock, taken before hashing, which cannot lose, and
 * so are the workspace's next batches for a while (one more round trip each, no lost races).
 */
import pg from "pg";
import { GENESIS } from "../../src/store/audit-chain.js";
import type { UnitOfWork } from "../../src/store/contracts.js";
import { chainStep, type ChainHead, type ChainStep } from "./store-unit.js";

/** Units sent in one transaction at most. */
const BATCH = 64;
/** How long a workspace another host wrote to is written under the lock before trying without. */
const CONTENDED_MS = 2000;
/** How often a unit is tried again under the head's lock (another writer moved it, a deadlock). */
const RETRIES = 10;

export interface ChainedUnit {
  unit: UnitOfWork;
  /** The unit's statements, hashed onto `chain`. */
  sql: (chain: ChainStep) => string;
}

interface Waiting extends ChainedUnit {
  resolve: () => void;
  reject: (error: unknown) => void;
}

interface Workspace {
  queue: Waiting[];
  busy: boolean;
  /** Until when units are hashed under the head's lock straight away (other hosts write here). */
  lockedUntil: number;
  /** The head as this host's last committed batch left it; undefined until read. */
  head?: ChainHead;
}

export const chainMoved = (error: unknown): boolean => {
  const e = error as { code?: string; constraint?: string };
  return e?.code === "PU002" || (e?.code === "23505" && e.constraint === "audit_events_workspace_id_chain_seq_key");
};

export class ChainWriter {
  private readonly workspaces = new Map<string, Workspace>();

  constructor(
    private readonly pool: () => Promise<pg.Pool>,
    private readonly table: (name: string) => string,
  ) {}

  /** Resolves once the unit committed, in the order units of its workspace were written. */
  write(workspaceId: string, item: ChainedUnit): Promise<void> {
    let ws = this.workspaces.get(workspaceId);
    if (!ws) this.workspaces.set(workspaceId, (ws = { queue: [], busy: false, lockedUntil: 0 }));
    const done = new Promise<void>((resolve, reject) => ws.queue.push({ ...item, resolve, reject }));
    void this.flush(workspaceId, ws);
    return done;
  }

  private async flush(workspaceId: string, ws: Workspace): Promise<void> {
    if (ws.busy) return;
    ws.busy = true;
    try {
      while (ws.queue.length > 0) {
        const batch = ws.queue.splice(0, BATCH);
        await this.send(workspaceId, ws, batch);
      }
    } finally {
      ws.busy = false;
    }
  }

  private async send(workspaceId: string, ws: Workspace, batch: Waiting[]): Promise<void> {
    let sent = batch;
    if (ws.lockedUntil <= Date.now()) {
      try {
        ws.head ??= await this.readHead(workspaceId);
        const hashed = this.hash(ws.head, batch);
        sent = hashed.sent;
        if (sent.length > 0) await (await this.pool()).query(hashed.sql);
        ws.head = hashed.head;
        for (const w of sent) w.resolve();
        return;
      } catch (error) {
        ws.head = undefined;
        if (!chainMoved(error)) return this.oneByOne(workspaceId, ws, sent, error);
        // Other hosts write here too: hash under the lock for a while instead of losing races.
        ws.lockedUntil = Date.now() + CONTENDED_MS;
      }
    }
    try {
      const done = await this.sendLocked(workspaceId, sent);
      ws.head = done.head;
      for (const w of done.sent) w.resolve();
    } catch (error) {
      ws.head = undefined;
      await this.oneByOne(workspaceId, ws, sent, error);
    }
  }

  /** A batch failed: one unit refused (or the database away). Each unit alone finds out which. */
  private async oneByOne(workspaceId: string, ws: Workspace, sent: Waiting[], error: unknown): Promise<void> {
    if (sent.length === 1) return sent[0]?.reject(error);
    for (const w of sent) {
      try {
        ws.head = (await this.sendLocked(workspaceId, [w])).head;
        w.resolve();
      } catch (failure) {
        ws.head = undefined;
        w.reject(failure);
      }
    }
  }

  /** The batch's statements hashed from `head`; a unit that cannot be written (not JSON) is refused alone. */
  private hash(head: ChainHead, batch: Waiting[]): { sql: string; head: ChainHead; sent: Waiting[] } {
    const parts: string[] = [];
    const sent: Waiting[] = [];
    for (const w of batch) {
      try {
        const step = chainStep(head, w.unit.audit);
        parts.push(w.sql(step));
        head = step.to;
        sent.push(w);
      } catch (error) {
        w.reject(error);
      }
    }
    return { sql: parts.join(";\n"), head, sent };
  }

  private async readHead(workspaceId: string): Promise<ChainHead> {
    const client = await (await this.pool()).connect();
    try {
      await client.query("BEGIN READ ONLY");
      await client.query("SELECT set_config('pulse.workspace', $1, true)", [workspaceId]);
      const row = (await client.query<{ next_seq: string; head: string }>(`SELECT next_seq, head FROM ${this.table("audit_chains")}`)).rows[0];
      await client.query("COMMIT");
      return row ? { seq: Number(row.next_seq), hash: row.head } : { seq: 0, hash: GENESIS };
    } catch (error) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  /** Units under the chain head's row lock (taken before hashing: it cannot lose); the head they leave. */
  private async sendLocked(workspaceId: string, items: Waiting[]): Promise<{ head: ChainHead; sent: Waiting[] }> {
    const ws = pg.escapeLiteral(workspaceId);
    const chains = this.table("audit_chains");
    for (let attempt = 1; ; attempt++) {
      const client = await (await this.pool()).connect();
      try {
        const results = (await client.query(`BEGIN; SELECT set_config('pulse.workspace', ${ws}, true); INSERT INTO ${chains} (workspace_id, next_seq, head) VALUES (${ws}, 0, ${pg.escapeLiteral(GENESIS)}) ON CONFLICT DO NOTHING; SELECT next_seq, head FROM ${chains} FOR UPDATE`)) as unknown as pg.QueryResult<{ next_seq: string; head: string }>[];
        const row = results[results.length - 1]?.rows[0] as { next_seq: string; head: string };
        const hashed = this.hash({ seq: Number(row.next_seq), hash: row.head }, items);
        await client.query(hashed.sent.length > 0 ? `${hashed.sql};\nCOMMIT` : "COMMIT");
        return { head: hashed.head, sent: hashed.sent };
      } catch (error) {
        await client.query("ROLLBACK").catch(() => undefined);
        // A deadlock with a unit that took other rows first: PostgreSQL aborted one of the two.
        if (!(chainMoved(error) || (error as { code?: string }).code === "40P01") || attempt >= RETRIES) throw error;
      } finally {
        client.release();
      }
    }
  }
}
