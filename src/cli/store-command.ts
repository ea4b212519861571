/**
 * `pulse store info | vacuum | export --jsonl`: what a store holds (its size, version and rows per
 * table), compacting a SQLite file, and every row (of a SQLite file or a PostgreSQL schema) as
 * JSON lines for backups and other tools.
 */
import { EXIT, UsageError } from "./exit-codes.js";
import type { CliIO } from "./io.js";
import { StoreError } from "../store/contracts.js";
import { openStoreForCli, storeSpec } from "./store-open.js";

export async function runStoreInfo(opts: { store?: string; json?: boolean }, io: CliIO): Promise<number> {
  const store = await openStoreForCli(storeSpec(opts.store, io), io, "pulse store info", { readonly: true });
  if (!store) return EXIT.problems;
  try {
    const info = await store.info();
    if (opts.json) io.stdout(`${JSON.stringify(info)}\n`);
    else {
      io.stdout(`${info.kind} store ${info.location}: schema version ${info.version}${info.bytes !== undefined ? `, ${formatBytes(info.bytes)}` : ""}\n`);
      const width = Math.max(14, ...Object.keys(info.counts).map((t) => t.length));
      for (const [table, n] of Object.entries(info.counts)) io.stdout(`  ${table.padEnd(width)} ${n}\n`);
    }
    return EXIT.ok;
  } catch (error) {
    if (!(error instanceof StoreError)) throw error;
    io.stderr(`pulse store info: ${error.message}\n`);
    return EXIT.problems;
  } finally {
    await store.close();
  }
}

/** The SQLite store behind a spec, for what only a file can do (vacuum) or a file does its own way (export). */
async function sqliteStore(spec: string | undefined, io: CliIO, command: string, readonly: boolean) {
  const resolved = storeSpec(spec, io);
  if (!resolved.startsWith("sqlite:")) throw new UsageError(`${command} works on a SQLite store (--store sqlite:PATH); ${resolved} keeps nothing to ${command.endsWith("vacuum") ? "compact" : "export"}`);
  const store = await openStoreForCli(resolved, io, command, { readonly });
  return store as (typeof store & { rows(): Iterable<{ table: string; row: Record<string, unknown> }>; vacuum(): void }) | undefined;
}

export async function runStoreVacuum(opts: { store?: string }, io: CliIO): Promise<number> {
  const store = await sqliteStore(opts.store, io, "pulse store vacuum", false);
  if (!store) return EXIT.problems;
  try {
    const before = (await store.info()).bytes ?? 0;
    store.vacuum();
    const after = (await store.info()).bytes ?? 0;
    io.stdout(`vacuumed ${store.description}: ${formatBytes(before)} → ${formatBytes(after)}\n`);
    return EXIT.ok;
  } finally {
    await store.close();
  }
}

type ExportedRow = { table: string; row: Record<string, unknown> };

/** Every row of a SQLite file or a PostgreSQL schema as JSON lines, streamed (a cursor on PostgreSQL). */
export async function runStoreExport(opts: { store?: string; jsonl?: boolean }, io: CliIO): Promise<number> {
  if (!opts.jsonl) throw new UsageError("pulse store export writes JSON lines: give --jsonl (e.g. pulse store export --jsonl > backup.jsonl)");
  const command = "pulse store export";
  const spec = storeSpec(opts.store, io);
  const postgres = /^postgres(ql)?:\/\//.test(spec);
  if (!postgres && !spec.startsWith("sqlite:")) throw new UsageError(`${command} works on a SQLite or PostgreSQL store (--store sqlite:PATH or postgres://…); ${spec} keeps nothing to export`);
  const store = postgres ? await openStoreForCli(spec, io, command, { readonly: true }) : await sqliteStore(spec, io, command, true);
  if (!store) return EXIT.problems;
  try {
    let lines = 0;
    for await (const { table, row } of (store as unknown as { rows(): Iterable<ExportedRow> | AsyncIterable<ExportedRow> }).rows()) {
      io.stdout(`${JSON.stringify({ table, row })}\n`);
      // Standard output slower than the rows: wait for it rather than hold the rows in memory.
      if (++lines % 500 === 0) await io.drain?.();
    }
    return EXIT.ok;
  } catch (error) {
    if (!(error instanceof StoreError)) throw error;
    io.stderr(`${command}: ${error.message}\n`);
    return EXIT.problems;
  } finally {
    await store.close();
  }
}

function formatBytes(n: number): string {
  return n < 1024 ? `${n} B` : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / 1024 / 1024).toFixed(1)} MiB`;
}
