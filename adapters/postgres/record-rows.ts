/**
 * The coding loops' records as PostgreSQL rows and back (JSON columns as text in, bigint columns as
 * numbers out), and the driver's errors as the store's: shared by the session and workflow records.
 */
import type pg from "pg";
import { StoreError } from "../../src/store/contracts.js";
import { parsePostgresUrl, PostgresAddressError, type PostgresAddress } from "./address.js";
import { PostgresDatabase } from "./database.js";
import { describePgError, PostgresStoreError } from "./errors.js";

export type Row = Record<string, unknown>;

/** A record as column names and parameters; a key that is no column is a programming error, never SQL. */
export function rowOf(record: object, isColumn: (key: string) => boolean, json: ReadonlySet<string>, notAColumn: (key: string) => Error): { cols: string[]; values: unknown[] } {
  const cols: string[] = [];
  const values: unknown[] = [];
  for (const [k, v] of Object.entries(record)) {
    if (!isColumn(k)) throw notAColumn(k);
    if (v === undefined) continue;
    cols.push(k);
    values.push(json.has(k) && v !== null ? JSON.stringify(v) : v);
  }
  return { cols, values };
}

/** pg answers bigint columns as strings: the records hold numbers. */
export function recordOf<T>(row: Row, bigint: ReadonlySet<string>): T {
  const out: Row = {};
  for (const [k, v] of Object.entries(row)) out[k] = bigint.has(k) && typeof v === "string" ? Number(v) : v;
  return out as T;
}

/** A failure as the store names it: the records' own errors as they are, the rest unavailable or failed. */
export function recordsError(display: string, error: unknown, own: (e: unknown) => boolean): Error {
  if (own(error) || error instanceof StoreError) return error as Error;
  if (error instanceof PostgresStoreError) return new StoreError(error.code, error.message, { cause: error });
  if (error instanceof PostgresAddressError) return new StoreError("STORE_SPEC", error.message, { cause: error });
  const code = String((error as { code?: unknown })?.code ?? "");
  const unavailable = /^E(CONNREFUSED|HOSTUNREACH|NOTFOUND|TIMEDOUT|CONNRESET|PIPE)$/.test(code) || /^(08|57P)/.test(code);
  return new StoreError(unavailable ? "STORE_UNAVAILABLE" : "STORE_FAILED", `${unavailable ? `PostgreSQL at ${display} is unavailable: ` : `${display}: `}${describePgError(error)}`, { cause: error });
}

/** A loop's tables as the opener checks them: their version in the schema, what this pulse needs, and the refusals. */
export interface RecordTables {
  version(pool: pg.Pool, schema: string): Promise<number>;
  needed: number;
  tooNew(address: PostgresAddress, version: number): Error;
  notMigrated(address: PostgresAddress, version: number): Error;
}

/**
 * The connections a loop's records use (a small pool), once its tables are at the version this
 * pulse needs: refused (the pool closed) when they are missing, older or newer; every failure as
 * `wrap` names it for the user.
 */
export async function openRecordsDatabase(url: string, tables: RecordTables, wrap: (display: string, error: unknown) => Error, onNote?: (message: string) => void): Promise<PostgresDatabase> {
  let display = url;
  try {
    const address = parsePostgresUrl(url);
    display = address.display;
    const db = await PostgresDatabase.open(url, { max: 4, ...(onNote ? { onNote } : {}) });
    try {
      const version = await tables.version(db.pool, address.schema);
      if (version > tables.needed) throw tables.tooNew(address, version);
      if (version < tables.needed) throw tables.notMigrated(address, version);
    } catch (error) {
      await db.close().catch(() => undefined);
      throw error;
    }
    return db;
  } catch (error) {
    throw wrap(display, error);
  }
}

/** The refusal of tables older than this pulse needs (or absent): migrate them first. */
export function notMigrated(what: string, needed: number): (address: PostgresAddress, version: number) => PostgresStoreError {
  return (a, version) => new PostgresStoreError("STORE_NOT_MIGRATED", `schema ${a.schema} at ${a.display} has ${version === 0 ? `no ${what}` : `${what} at version ${version}, this pulse needs ${needed}`}: run pulse store migrate --store '${a.storeArg}' with an owner's credentials first`);
}
