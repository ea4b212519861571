/**
 * `pulse runs [--store …] [--kind session|workflow|agent] [--json]`: every coding loop's runs in
 * one list (the common run view, src/coding/run-records.ts), newest first, with the status as
 * displayed (a run whose runner is gone is `interrupted`). Thin: one query of the store's
 * `pulse_runs` view, no runtime, no driver.
 */
import { MemoryRunRecords } from "../../adapters/memory/run-records.js";
import { SqliteRunRecords } from "../../adapters/sqlite/run-records.js";
import { RunRecordsError, runKindOf, type RunRecords, type RunView } from "../coding/run-records.js";
import { StoreError } from "../store/contracts.js";
import { EXIT, UsageError } from "./exit-codes.js";
import type { CliIO } from "./io.js";
import { sessionStoreOf } from "./session-setup.js";

/** The run view of the store a command names (--store, else $PULSE_STORE, else .pulse/pulse.db). */
export async function openRunRecords(store: string | undefined, io: Pick<CliIO, "env" | "cwd" | "stderr">): Promise<RunRecords> {
  const spec = sessionStoreOf(store, io);
  // memory: holds nothing another process wrote.
  if (spec.kind === "memory") return MemoryRunRecords.create();
  if (spec.kind === "sqlite") return SqliteRunRecords.open(spec.path);
  const { PostgresRunRecords } = await import("../../adapters/postgres/run-records.js");
  try {
    return await PostgresRunRecords.open(spec.url, { onNote: (m) => io.stderr(`pulse: ${m}\n`) });
  } catch (error) {
    if (error instanceof StoreError) throw new UsageError(`${spec.flag}: ${error.message}`);
    throw error;
  }
}

const money = (n: number) => `$${n.toFixed(n >= 1 ? 2 : 4)}`;
const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

export function runLine(r: RunView): string {
  const parts = [r.kind.padEnd(8), r.id.slice(0, 8), r.status.padEnd(11), `${r.iteration}/${r.max_iterations}`.padEnd(6), `${r.commits.length} commit${r.commits.length === 1 ? "" : "s"}`.padEnd(10), money(r.cost_usd).padEnd(8), clip(r.goal.replace(/\s+/g, " "), 60)];
  return parts.join("  ");
}

export async function runRuns(opts: { store?: string; kind?: string; json?: boolean }, io: CliIO): Promise<number> {
  let kind;
  try {
    kind = runKindOf(opts.kind, "--kind");
  } catch (e) {
    if (e instanceof RunRecordsError) throw new UsageError(e.message);
    throw e;
  }
  let records: RunRecords;
  try {
    records = await openRunRecords(opts.store, io);
  } catch (error) {
    if (!(error instanceof StoreError)) throw error;
    io.stderr(`pulse runs: ${error.message}\n`);
    return EXIT.problems;
  }
  try {
    const runs = await records.list(kind ? { kind } : {});
    if (opts.json) io.stdout(`${JSON.stringify(runs, null, 2)}\n`);
    else if (runs.length === 0) io.stdout(`no ${kind ? `${kind} ` : ""}runs in this store\n`);
    else for (const r of runs) io.stdout(`${runLine(r)}\n`);
    return EXIT.ok;
  } catch (error) {
    if (!(error instanceof StoreError)) throw error;
    io.stderr(`pulse runs: ${error.message}\n`);
    return EXIT.problems;
  } finally {
    await records.close();
  }
}
