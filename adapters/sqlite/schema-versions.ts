/**
 * Versioned migrations per component of one SQLite file (the store, the session records): the
 * `pulse_schema_versions` table says which version of its tables each component wrote. A
 * component migrates only its own tables, in one transaction, and refuses a file whose version
 * for it is newer than it knows, naming both versions.
 */
import { StoreError } from "../../src/store/contracts.js";
import type { Database } from "./driver.js";

const TABLE = "CREATE TABLE IF NOT EXISTS pulse_schema_versions (component TEXT PRIMARY KEY, version INTEGER NOT NULL, written_by TEXT NOT NULL) STRICT";

/** The version of a component's tables in the file (0: none yet). */
export function componentVersion(db: Database, component: string): number {
  const known = db.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'pulse_schema_versions'").get();
  if (!known) return 0;
  const row = db.prepare("SELECT version FROM pulse_schema_versions WHERE component = ?").get(component) as { version: number } | undefined;
  return row?.version ?? 0;
}

/**
 * Brings a component's tables to the last of `migrations` (migration n takes version n-1 to n).
 * Returns the version it found.
 */
export function migrateComponent(db: Database, path: string, component: string, migrations: readonly string[], writtenBy: string): number {
  const target = migrations.length;
  const found = componentVersion(db, component);
  if (found > target) {
    throw new StoreError("STORE_TOO_NEW", `${path}: its ${component} tables are at schema version ${found}, written by a newer pulse; this pulse knows ${component} schema versions up to ${target}: upgrade pulse, or use another --store`);
  }
  if (found === target) return found;
  db.transaction(() => {
    db.exec(TABLE);
    // Another process may have migrated between the read above and this transaction.
    const now = componentVersion(db, component);
    for (let v = now; v < target; v++) db.exec(migrations[v] as string);
    db.prepare("INSERT INTO pulse_schema_versions (component, version, written_by) VALUES (?, ?, ?) ON CONFLICT (component) DO UPDATE SET version = excluded.version, written_by = excluded.written_by").run(component, target, writtenBy);
  }).immediate();
  return found;
}
