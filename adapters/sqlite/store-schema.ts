/**
 * The store's tables in a SQLite file, as numbered migrations (component "store" of
 * pulse_schema_versions). They mirror the PostgreSQL store's (adapters/postgres/schema.ts).
 * JSON values are kept as text, byte for byte: a replay returns exactly what the phase returned.
 * Audit events are append-only in the file itself: triggers refuse UPDATE and DELETE.
 */
import { StoreError } from "../../src/store/contracts.js";
import type { Database } from "./driver.js";
import { componentVersion } from "./schema-versions.js";

const V1 = `
CREATE TABLE iterations (
  id INTEGER PRIMARY KEY, loop_id TEXT NOT NULL, workspace_id TEXT NOT NULL, trace_id TEXT NOT NULL,
  number INTEGER NOT NULL, entry TEXT NOT NULL, input TEXT NOT NULL, cause TEXT, started_at TEXT NOT NULL,
  status TEXT NOT NULL, closed INTEGER NOT NULL DEFAULT 0, error TEXT, finished_at TEXT,
  UNIQUE (loop_id, workspace_id, trace_id)
) STRICT;
CREATE INDEX iterations_running ON iterations (loop_id) WHERE status = 'running';

CREATE TABLE phases (
  id INTEGER PRIMARY KEY, iteration_id INTEGER NOT NULL REFERENCES iterations (id), phase_id TEXT NOT NULL,
  signature TEXT NOT NULL, status TEXT NOT NULL, output TEXT NOT NULL, next TEXT, committed_at TEXT NOT NULL
) STRICT;
CREATE INDEX phases_by_iteration ON phases (iteration_id);

CREATE TABLE idempotency (
  workspace_id TEXT NOT NULL, signature TEXT NOT NULL, loop_id TEXT NOT NULL, output TEXT NOT NULL,
  trace_id TEXT NOT NULL, created_at TEXT NOT NULL, PRIMARY KEY (workspace_id, signature)
) STRICT;
CREATE INDEX idempotency_by_loop ON idempotency (loop_id);

CREATE TABLE audit_events (
  position INTEGER PRIMARY KEY, workspace_id TEXT NOT NULL, chain_seq INTEGER NOT NULL, event_id TEXT NOT NULL,
  event_type TEXT NOT NULL, trace_id TEXT NOT NULL, loop_id TEXT NOT NULL, phase_id TEXT, seq INTEGER NOT NULL,
  timestamp TEXT NOT NULL, signature TEXT NOT NULL, data TEXT, prev_hash TEXT NOT NULL, hash TEXT NOT NULL,
  UNIQUE (workspace_id, chain_seq)
) STRICT;
CREATE INDEX audit_by_trace ON audit_events (trace_id, seq);
CREATE TABLE audit_chains (workspace_id TEXT PRIMARY KEY, next_seq INTEGER NOT NULL, head TEXT NOT NULL) STRICT;
CREATE TRIGGER audit_events_no_update BEFORE UPDATE ON audit_events
  BEGIN SELECT RAISE(ABORT, 'audit events are append-only (PULSE §7.3): UPDATE refused'); END;
CREATE TRIGGER audit_events_no_delete BEFORE DELETE ON audit_events
  BEGIN SELECT RAISE(ABORT, 'audit events are append-only (PULSE §7.3): DELETE refused'); END;

CREATE TABLE loops (
  loop_id TEXT NOT NULL, workspace_id TEXT NOT NULL, iterations INTEGER NOT NULL, started INTEGER NOT NULL,
  updated_at TEXT NOT NULL, PRIMARY KEY (loop_id, workspace_id)
) STRICT;

CREATE TABLE outbox (
  id INTEGER PRIMARY KEY, connection_id TEXT NOT NULL, event_id TEXT NOT NULL, loop_id TEXT NOT NULL,
  workspace_id TEXT NOT NULL, trace_id TEXT NOT NULL, to_loop TEXT NOT NULL, envelope TEXT NOT NULL,
  created_at TEXT NOT NULL, status TEXT NOT NULL DEFAULT 'pending', detail TEXT, settled_at TEXT,
  UNIQUE (connection_id, event_id)
) STRICT;
CREATE INDEX outbox_pending ON outbox (id) WHERE status = 'pending';

CREATE TABLE inbox (
  loop_id TEXT NOT NULL, workspace_id TEXT NOT NULL, event_id TEXT NOT NULL, trace_id TEXT NOT NULL,
  received_at TEXT NOT NULL, PRIMARY KEY (loop_id, workspace_id, event_id)
) STRICT;

CREATE TABLE memory_rows (
  id INTEGER PRIMARY KEY, graph TEXT NOT NULL, workspace_id TEXT NOT NULL, kind TEXT NOT NULL, key TEXT NOT NULL,
  value TEXT NOT NULL, UNIQUE (graph, workspace_id, kind, key)
) STRICT;
`;

/**
 * Version 2: a phase's transaction dirties as few b-tree pages as it can (each dirtied page is a
 * WAL frame written at commit, the bulk of a commit's cost): tables a phase writes are appended to
 * by rowid, and no index keyed by a random value is written per phase.
 * - A phase's idempotency record is two columns of its phase row (`idempotency_key`, and
 *   `idempotency_output` when it is not the phase's output); `idempotency` keeps only records
 *   committed without a phase, appended (no index: a read keeps the newest of each signature).
 * - An iteration's phases are found from `phases_after` (the last phase row when it started)
 *   instead of an index on iteration_id; running iterations are those after the watermark
 *   `store_state.iterations_finished_upto` (every iteration up to it has finished, moved up with
 *   the trace index) whose status says so, instead of a partial index written at start and end.
 * - The audit trail's trace index (`audit_traces`, keyed by the random trace id) is filled in
 *   batches up to the watermark `store_state.audit_traces_upto`; a trace query reads the index and
 *   scans the events after the watermark. Opening the file for writing catches it up.
 * - `audit_events` has no index besides its position: a workspace's chain head is kept in memory
 *   and checkpointed in `audit_chains` (next_seq, head, and `upto`: the workspace has no event
 *   after its head up to that position) when its chain starts, every few thousand events and
 *   on close; the head is its checkpoint or its last event after `upto`. `pulse audit verify`
 *   walks the chain in position order and checks it reaches the checkpoint (events removed from
 *   its end).
 */
const V2 = `
CREATE TABLE audit_events_v2 (
  position INTEGER PRIMARY KEY, workspace_id TEXT NOT NULL, chain_seq INTEGER NOT NULL, event_id TEXT NOT NULL,
  event_type TEXT NOT NULL, trace_id TEXT NOT NULL, loop_id TEXT NOT NULL, phase_id TEXT, seq INTEGER NOT NULL,
  timestamp TEXT NOT NULL, signature TEXT NOT NULL, data TEXT, prev_hash TEXT NOT NULL, hash TEXT NOT NULL
) STRICT;
INSERT INTO audit_events_v2 SELECT position, workspace_id, chain_seq, event_id, event_type, trace_id, loop_id, phase_id, seq, timestamp, signature, data, prev_hash, hash FROM audit_events ORDER BY position;
DROP TABLE audit_events;
ALTER TABLE audit_events_v2 RENAME TO audit_events;
CREATE TRIGGER audit_events_no_update BEFORE UPDATE ON audit_events
  BEGIN SELECT RAISE(ABORT, 'audit events are append-only (PULSE §7.3): UPDATE refused'); END;
CREATE TRIGGER audit_events_no_delete BEFORE DELETE ON audit_events
  BEGIN SELECT RAISE(ABORT, 'audit events are append-only (PULSE §7.3): DELETE refused'); END;
ALTER TABLE audit_chains ADD COLUMN upto INTEGER NOT NULL DEFAULT 0;
UPDATE audit_chains SET upto = (SELECT coalesce(max(position), 0) FROM audit_events);

CREATE TABLE audit_traces (
  trace_id TEXT NOT NULL, seq INTEGER NOT NULL, position INTEGER NOT NULL, PRIMARY KEY (trace_id, seq, position)
) STRICT, WITHOUT ROWID;
INSERT INTO audit_traces (trace_id, seq, position) SELECT trace_id, seq, position FROM audit_events;
CREATE TABLE store_state (key TEXT PRIMARY KEY, value INTEGER NOT NULL) STRICT;
INSERT INTO store_state (key, value) VALUES ('audit_traces_upto', coalesce((SELECT max(position) FROM audit_events), 0));

ALTER TABLE phases ADD COLUMN idempotency_key TEXT;
ALTER TABLE phases ADD COLUMN idempotency_output TEXT;
DROP INDEX phases_by_iteration;
ALTER TABLE iterations ADD COLUMN phases_after INTEGER NOT NULL DEFAULT 0;
DROP INDEX iterations_running;
INSERT INTO store_state (key, value) VALUES ('iterations_finished_upto',
  coalesce((SELECT min(id) FROM iterations WHERE status = 'running') - 1, (SELECT max(id) FROM iterations), 0));

CREATE TABLE idempotency_v2 (
  id INTEGER PRIMARY KEY, loop_id TEXT NOT NULL, workspace_id TEXT NOT NULL, signature TEXT NOT NULL,
  output TEXT NOT NULL, trace_id TEXT NOT NULL, created_at TEXT NOT NULL
) STRICT;
INSERT INTO idempotency_v2 (loop_id, workspace_id, signature, output, trace_id, created_at)
  SELECT loop_id, workspace_id, signature, output, trace_id, created_at FROM idempotency ORDER BY created_at, rowid;
DROP TABLE idempotency;
ALTER TABLE idempotency_v2 RENAME TO idempotency;
`;

/**
 * Version 3: the chain checkpoints (`audit_chains`) are as append-only as the events: a
 * checkpoint only moves forward (the store's own upsert never moves one back) and is never
 * deleted. One moved back by hand would hide events cut from the end of its chain from verify.
 */
const V3 = `
CREATE TRIGGER audit_chains_no_delete BEFORE DELETE ON audit_chains
  BEGIN SELECT RAISE(ABORT, 'audit chain checkpoints are append-only (PULSE §7.3): DELETE refused'); END;
CREATE TRIGGER audit_chains_forward_only BEFORE UPDATE ON audit_chains
  WHEN NEW.workspace_id IS NOT OLD.workspace_id OR NEW.next_seq < OLD.next_seq OR NEW.upto < OLD.upto OR (NEW.next_seq = OLD.next_seq AND NEW.head IS NOT OLD.head)
  BEGIN SELECT RAISE(ABORT, 'audit chain checkpoints only move forward (PULSE §7.3): UPDATE refused'); END;
`;

/**
 * Version 4: an iteration's start no longer rewrites its loop's counters row (one b-tree page
 * fewer per iteration): `loops` holds the counters up to the watermark of finished iterations
 * (folded in when the watermark moves), and the iterations after it carry the rest: the highest
 * number, and whether one ended. A pulse that knows only version 3 would read `loops` alone and
 * number iterations again, hence the version. The tables do not change: every row a version-3
 * file holds is already counted in `loops`.
 */
const V4 = `-- counters: loops up to iterations_finished_upto, iterations after it (no table changes)`;

/** Migration n takes the store's tables from version n-1 to n. */
export const STORE_MIGRATIONS: readonly string[] = [V1, V2, V3, V4];

/** The store's own tables, first in what `pulse store info` counts and `pulse store export` writes (which is every table in the file: store-statements.ts fileTables). */
export const STORE_TABLES = ["iterations", "phases", "idempotency", "audit_events", "audit_chains", "loops", "outbox", "inbox", "memory_rows"] as const;

export const STORE_COMPONENT = "store";

/** A file opened only to read: it must hold the store's tables, at a version this pulse knows. */
export function checkReadable(db: Database, path: string): void {
  const version = componentVersion(db, STORE_COMPONENT);
  if (version === 0) throw new StoreError("STORE_MISSING", `${path}: holds no pulse store (pulse run creates one; --store names another)`);
  if (version > STORE_MIGRATIONS.length) throw new StoreError("STORE_TOO_NEW", `${path}: its store tables are at schema version ${version}, written by a newer pulse; this pulse knows store schema versions up to ${STORE_MIGRATIONS.length}: upgrade pulse`);
  // Migrating is a write, which a reader does not make (the pulse writing the file may be older).
  if (version < STORE_MIGRATIONS.length) throw new StoreError("STORE_TOO_OLD", `${path}: its store tables are at schema version ${version}, written by an older pulse; this pulse reads store schema version ${STORE_MIGRATIONS.length} and migrates a file when it opens it to write (pulse run, pulse store vacuum): stop the older pulse using it, then run one of those`);
}
