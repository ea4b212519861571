/**
 * Binds `postgres://` (and `postgresql://`) substrate URIs: the audit slot is served by the
 * PostgreSQL audit (audit.ts), one connection pool per URI, opened on the first call, so a host
 * whose manifests name no such URI never loads the client. Other slots are refused by name.
 */
import type { SubstrateFactory } from "../../src/substrates/registry.js";
import { PostgresAudit } from "./audit.js";
import type { PostgresDatabase } from "./database.js";

export function postgresSubstrateFactory(): SubstrateFactory {
  const pools = new Map<string, Promise<PostgresDatabase>>();
  const open = (uri: string) => {
    let db = pools.get(uri);
    if (!db) {
      db = import("./database.js").then(({ PostgresDatabase }) => PostgresDatabase.open(uri));
      // A failed open is retried on the next call rather than remembered.
      db.catch(() => pools.delete(uri));
      pools.set(uri, db);
    }
    return db;
  };
  return ((slot: string, uri: string) => {
    if (slot !== "audit") throw new Error(`${uri.replace(/\/\/([^:@/]*):[^@/]*@/, "//$1:***@")}: a postgres:// URI serves the audit slot only, not ${slot}`);
    return new PostgresAudit(() => open(uri));
  }) as SubstrateFactory;
}
