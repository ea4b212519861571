/**
 * The coding loops' records as PostgreSQL rows and back (JSON columns as text in, bigint columns as
 * numbers out), and the driver's errors as the store's: shared by the session and workflow records.
 */
import { StoreError } from "../../src/store/contracts.js";
import { PostgresAddressError } from "./address.js";
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
