/**
 * Units of work written per workspace, in order: each audit event's hash covers the previous
 * one's, so a workspace's units must reach the database one after the other. A host keeps at most
 * one call of commit_units per workspace in flight and sends the units that queued meanwhile
 * together in the next one (a group commit): while one batch is on the wire the next accumulates,
 * and 4 loops in one workspace cost one round trip per batch instead of one per unit waiting in
 * line. Different workspaces are written side by side, each on a connection of the pool. Each unit
 * is still whole or absent: a batch that fails is sent again unit by unit, so only the failing
 * unit is refused.
 *
 * A batch is hashed from the head the host expects (what its last batch left) and the database
 * moves the head only from there (advance_chain, schema.ts). When another host moved it first,
 * the batch is sent again under the head's row lock, taken before hashing, which cannot lose, and
 * so are the workspace's next batches for a while (one more round trip each, no lost races).
 */
import pg from "pg";
import { GENESIS } from "../../src/store/audit-chain.js";
import type { UnitOfWork } from "../../src/store/contracts.js";
import { chainStep, UnitBatch, type ChainHead, type UnitFence, type UnitMemory } from "./store-unit.js";

/** Units sent in one call at most. */
const BATCH = 64;
/** How long a workspace another host wrote to is written under the lock before trying without. */
const CONTENDED_MS = 2000;
/** How often a unit is tried again under the head's lock (another writer moved it, a deadlock). */
const RETRIES = 10;

export interface QueuedUnit {
  unit: UnitOfWork;
  memory?: UnitMemory;
  /** The workspace is not yet known to be in the directory. */
  newWorkspace: boolean;
  /** The fleet lease the unit is committed under (checked by the database), if any. */
  fence?: UnitFence;
}

interface Waiting extends QueuedUnit {
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

interface Built {
  batch: UnitBatch;
  sent: Waiting[];
  /** The head after the batch (the one it started from when it has no events). */
  head: ChainHead | undefined;
}

export const chainMoved = (error: unknown): boolean => {
  const e = error as { code?: string; constraint?: string };
  return e?.code === "PU002" || (e?.code === "23505" && e.constraint === "audit_events_workspace_id_chain_seq_key");
};

/** A string as a literal whatever standard_conforming_strings says (E'…': backslashes escaped too). */
const literal = (v: string | number | boolean | null): string => (v === null ? "NULL" : typeof v === "string" ? `E'${v.replace(/\\/g, "\\\\").replace(/'/g, "''")}'` : String(v));

export class ChainWriter {
  private readonly workspaces = new Map<string, Workspace>();

  constructor(
    private readonly pool: () => Promise<pg.Pool>,
    private readonly table: (name: string) => string,
  ) {}

  /** Resolves once the unit committed, in the order units of its workspace were written. */
  write(workspaceId: string, item: QueuedUnit): Promise<void> {
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
      for (;;) {
        // One turn of the event loop first: the loops whose units the last call committed are a few
        // promise hops from their next unit, and it joins this batch instead of waiting for the next.
        await new Promise<void>((resolve) => setImmediate(resolve));
        if (ws.queue.length === 0) break;
        await this.send(workspaceId, ws, ws.queue.splice(0, BATCH));
      }
    } finally {
      ws.busy = false;
    }
  }

  private async send(workspaceId: string, ws: Workspace, batch: Waiting[]): Promise<void> {
    let sent = batch;
    if (ws.lockedUntil <= Date.now()) {
      try {
        if (ws.head === undefined && batch.some((w) => w.unit.audit.length > 0)) ws.head = await this.readHead(workspaceId);
        const built = this.build(ws.head, batch);
        sent = built.sent;
        if (sent.length > 0) await (await this.pool()).query(this.prepared(workspaceId, built));
        ws.head = built.head;
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

  /** The batch's rows, its events hashed from `head`; a unit that cannot be written (not JSON) is refused alone. */
  private build(head: ChainHead | undefined, batch: Waiting[]): Built {
    const rows = new UnitBatch();
    const sent: Waiting[] = [];
    for (const w of batch) {
      try {
        const step = w.unit.audit.length > 0 ? chainStep(head as ChainHead, w.unit.audit) : undefined;
        rows.add(w.unit, step, w.memory, w.fence);
        if (step) head = step.to;
        sent.push(w);
      } catch (error) {
        w.reject(error);
      }
    }
    return { batch: rows, sent, head };
  }

  /** The arguments of commit_units for a built batch. */
  private args(workspaceId: string, built: Built): (string | number | boolean | null)[] {
    return [workspaceId, built.sent.some((w) => w.newWorkspace), ...built.batch.args(new Date().toISOString())];
  }

  /** The call as a statement prepared once per connection: its own transaction, one round trip. */
  private prepared(workspaceId: string, built: Built): pg.QueryConfig {
    return { name: "pulse_commit_units", text: `SELECT ${this.table("commit_units")}($1, $2, $3, $4, $5, $6, $7, $8)`, values: this.args(workspaceId, built) };
  }

  /** The call as SQL text, to send with other statements in one round trip. */
  private inline(workspaceId: string, built: Built): string {
    return `SELECT ${this.table("commit_units")}(${this.args(workspaceId, built).map(literal).join(", ")})`;
  }

  private async readHead(workspaceId: string): Promise<ChainHead> {
    const ws = literal(workspaceId);
    const results = (await (await this.pool()).query(`BEGIN READ ONLY; SELECT set_config('pulse.workspace', ${ws}, true); SELECT next_seq, head FROM ${this.table("audit_chains")}; COMMIT`)) as unknown as pg.QueryResult<{ next_seq: string; head: string }>[];
    const row = results[2]?.rows[0];
    return row ? { seq: Number(row.next_seq), hash: row.head } : { seq: 0, hash: GENESIS };
  }

  /** Units under the chain head's row lock (taken before hashing: it cannot lose); the head they leave. */
  private async sendLocked(workspaceId: string, items: Waiting[]): Promise<{ head: ChainHead; sent: Waiting[] }> {
    const ws = literal(workspaceId);
    const chains = this.table("audit_chains");
    for (let attempt = 1; ; attempt++) {
      const client = await (await this.pool()).connect();
      try {
        const results = (await client.query(`BEGIN; SELECT set_config('pulse.workspace', ${ws}, true); INSERT INTO ${chains} (workspace_id, next_seq, head) VALUES (${ws}, 0, ${literal(GENESIS)}) ON CONFLICT DO NOTHING; SELECT next_seq, head FROM ${chains} FOR UPDATE`)) as unknown as pg.QueryResult<{ next_seq: string; head: string }>[];
        const row = results[results.length - 1]?.rows[0] as { next_seq: string; head: string };
        const start = { seq: Number(row.next_seq), hash: row.head };
        const built = this.build(start, items);
        if (built.sent.length > 0) {
          // The call and COMMIT in one round trip: the head's lock is held for two.
          await client.query(`${this.inline(workspaceId, built)}; COMMIT`);
        } else await client.query("COMMIT");
        return { head: built.head ?? start, sent: built.sent };
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
