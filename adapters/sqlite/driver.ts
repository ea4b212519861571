/**
 * Opening a SQLite file through better-sqlite3, loaded on first use (an optional dependency that
 * compiles from source): WAL, synchronous=NORMAL (set explicitly: it reads FULL otherwise), a busy
 * timeout, and SQLite's failures turned into one line a person can act on (StoreError).
 */
import { existsSync, mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname } from "node:path";
import { StoreError } from "../../src/store/contracts.js";

/** The part of better-sqlite3's API the store uses. */
export interface Statement {
  run(...params: unknown[]): { changes: number; lastInsertRowid: number | bigint };
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
  iterate(...params: unknown[]): IterableIterator<unknown>;
}

export interface Database {
  prepare(sql: string): Statement;
  exec(sql: string): void;
  pragma(sql: string, options?: { simple?: boolean }): unknown;
  transaction<A extends unknown[], R>(fn: (...args: A) => R): { (...args: A): R; immediate(...args: A): R };
  close(): void;
  readonly open: boolean;
  readonly readonly: boolean;
}

type DatabaseConstructor = new (path: string, options?: { readonly?: boolean; fileMustExist?: boolean; timeout?: number }) => Database;

let driver: DatabaseConstructor | undefined;

function loadDriver(): DatabaseConstructor {
  if (driver) return driver;
  // Not `require`: the bundler must leave this native module to be found at run time.
  const load = createRequire(import.meta.url);
  try {
    driver = load("better-sqlite3") as DatabaseConstructor;
    return driver;
  } catch (error) {
    throw new StoreError("STORE_DRIVER_MISSING", `the SQLite store needs the better-sqlite3 package, which is not installed (${(error as Error).message.split("\n")[0]}): run npm install better-sqlite3@12.11.1, or use --store memory:`);
  }
}

export const BUSY_TIMEOUT_MS = 5000;

export function openDatabase(path: string, options: { readonly?: boolean } = {}): Database {
  const Driver = loadDriver();
  if (options.readonly && !existsSync(path)) throw new StoreError("STORE_MISSING", `${path}: no store there yet (pulse run creates it; --store names another)`);
  if (!options.readonly && path !== ":memory:") {
    try {
      mkdirSync(dirname(path), { recursive: true });
    } catch (error) {
      throw storeError(path, error);
    }
  }
  let db: Database | undefined;
  try {
    db = new Driver(path, { readonly: options.readonly === true, fileMustExist: options.readonly === true, timeout: BUSY_TIMEOUT_MS });
    if (!options.readonly) {
      db.pragma("journal_mode = WAL");
      db.pragma("synchronous = NORMAL");
      // Checkpoints (which fsync) every ~64 MB of WAL rather than SQLite's 4 MB: a phase writes
      // ~10 pages (one per table and index it touches), so the default would checkpoint every
      // ~100 phases; the WAL file stays bounded, and a commit's durability is unchanged.
      db.pragma("wal_autocheckpoint = 16000");
    }
    db.pragma("foreign_keys = ON");
    // Reading the schema makes a file that is not a database say so now, not at the first write.
    db.prepare("SELECT count(*) FROM sqlite_schema").get();
    return db;
  } catch (error) {
    db?.close();
    throw storeError(path, error);
  }
}

/**
 * SQLite's quick_check of every page of the file (b-tree structure, cell and record formats; not
 * index contents): a damaged file is said as one, STORE_CORRUPT. It reads the whole file, once
 * per open for writing and per `pulse audit verify`.
 */
export function checkIntegrity(db: Database, path: string): void {
  const result = db.pragma("quick_check(1)", { simple: true });
  if (result === "ok") return;
  // Its report spans lines ("*** in database main ***", then the page): one line here.
  const found = String(result).replace(/\*\*\* in database \w+ \*\*\*/g, "").trim().replace(/\s*\n\s*/g, "; ");
  throw storeError(path, Object.assign(new Error(`integrity check: ${found}`), { code: "SQLITE_CORRUPT" }));
}

/** SQLite's and the file system's failures, as one line naming the file and what to do. */
export function storeError(path: string, error: unknown): StoreError {
  if (error instanceof StoreError) return error;
  const e = error as { code?: string; message?: string };
  const code = String(e.code ?? "");
  const reason = e.message ?? String(error);
  if (code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED")) return new StoreError("STORE_LOCKED", `${path}: the store is locked by another process (waited ${BUSY_TIMEOUT_MS / 1000}s); stop the other pulse using it, or use another --store`, { cause: error });
  if (code === "SQLITE_NOTADB" || code.startsWith("SQLITE_CORRUPT")) return new StoreError("STORE_CORRUPT", `${path}: not a pulse store, or a damaged one (${reason}); restore it from a backup (docs/store.md) or move it aside`, { cause: error });
  if (code.startsWith("SQLITE_READONLY") || code === "EACCES" || code === "EROFS" || code === "EPERM") return new StoreError("STORE_READ_ONLY", `${path}: cannot write the store (${reason}); make its directory writable, or use --store sqlite:ANOTHER_PATH`, { cause: error });
  if (code.startsWith("SQLITE_CANTOPEN")) return new StoreError("STORE_CANNOT_OPEN", `${path}: cannot open the store (${reason}); check that its directory exists and is writable`, { cause: error });
  if (code === "SQLITE_FULL" || code === "ENOSPC") return new StoreError("STORE_FULL", `${path}: the disk is full; what was committed before is kept, free some space and run again`, { cause: error });
  if (code.startsWith("SQLITE_IOERR")) return new StoreError("STORE_IO", `${path}: the store could not be read or written (${reason})`, { cause: error });
  return new StoreError("STORE_FAILED", `${path}: ${reason}`, { cause: error });
}
