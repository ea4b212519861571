/** A PostgreSQL schema of its own for a session test, set up by the real `pulse store migrate`. */
import { runBin } from "../cli/run-bin.js";
import { pgSchema, type PgSchema } from "../adapters/postgres/helpers.js";

/** A fresh schema (`?schema=pulse_t…`) migrated by the built bin; `drop` removes it and its roles. */
export function migratedSchema(baseUrl: string): PgSchema {
  const s = pgSchema(baseUrl);
  const r = runBin("pulse", ["store", "migrate", "--store", s.url]);
  if (r.code !== 0) throw new Error(`pulse store migrate --store ${s.url} exited ${r.code}: ${r.stderr}`);
  return s;
}
