/**
 * `pulse store info | vacuum | export --jsonl`: what a store holds (its size, version and rows per
 * table), compacting a SQLite file, and every row as JSON lines for backups and other tools.
 */
import { EXIT, UsageError } from "./exit-codes.js";
import type { CliIO } from "./io.js";
import { openStoreForCli, storeSpec } from "./store-open.js";

export async function runStoreInfo(opts: { store?: string; json?: boolean }, io: CliIO): Promise<number> {
  const store = await openStoreForCli(storeSpec(opts.store, io), io, "pulse store info", { readonly: true });
  if (!store) return EXIT.problems;
  try {
    const info = await store.info();
    if (opts.json) io.stdout(`${JSON.stringify(info)}\n`);
    else {
      io.stdout(`${info.kind} store ${info.location}: schema version ${info.version}${info.bytes !== undefined ? `, ${formatBytes(info.bytes)}` : ""}\n`);
      for (const [table, n] of Object.entries(info.counts)) io.stdout(`  ${table.padEnd(14)} ${n}\n`);
    }
    return EXIT.ok;
  } finally {
    await store.close();
  }
}

/** The SQLite store behind a spec, for what only a file can do (vacuum, export). */
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

export async function runStoreExport(opts: { store?: string; jsonl?: boolean }, io: CliIO): Promise<number> {
  if (!opts.jsonl) throw new UsageError("pulse store export writes JSON lines: give --jsonl (e.g. pulse store export --jsonl > backup.jsonl)");
  const store = await sqliteStore(opts.store, io, "pulse store export", true);
  if (!store) return EXIT.problems;
  try {
    for (const { table, row } of store.rows()) io.stdout(`${JSON.stringify({ table, row })}\n`);
    return EXIT.ok;
  } finally {
    await store.close();
  }
}

function formatBytes(n: number): string {
  return n < 1024 ? `${n} B` : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / 1024 / 1024).toFixed(1)} MiB`;
}
