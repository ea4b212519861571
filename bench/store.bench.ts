/**
 * Issue 15: the 5-phase loop of runtime.bench.ts on the durable SQLite store (WAL,
 * synchronous=NORMAL, one transaction per phase) beside the in-memory store and beside the floor:
 * a bare better-sqlite3 loop doing one insert per phase in its own transaction. Then a restart on
 * a store holding 100,000 finished iterations and one interrupted: open, recover, resume.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "yaml";
import { MemoryStore } from "../adapters/memory/store.js";
import { SqliteStore } from "../adapters/sqlite/store.js";
import { createRuntime } from "../src/embedded.js";
import type { Store } from "../src/store/contracts.js";
import { median, report } from "./measure.js";

const root = new URL("../../", import.meta.url);
const manifest = parse(readFileSync(new URL("manifests/graphonomous.continual_learning.yaml", root), "utf8"));
manifest.invariants = Object.fromEntries(Object.keys(manifest.invariants).map((k) => [k, true]));
delete manifest.nesting;
delete manifest.connections;
const PHASES = 5;
const dir = mkdtempSync(join(tmpdir(), "pulse-store-bench-"));

async function pulseLoop(store: Store) {
  const runtime = await createRuntime({ store });
  const loop = await runtime.load(structuredClone(manifest));
  loop.handle("retrieve_ctx", ({ input }) => ({ query: (input as { query: number }).query, k: 5 }));
  loop.handle("route_topology", ({ trace_id }) => ({ decision: "deliberate", result: { token: "DeliberationResult", version: "0.1", trace_id, verdict: "approve", confidence: 0.9 } }));
  loop.handle("act_store", () => ({ causal_parent_ids: [] }));
  loop.handle("learn_outcome", () => ({ learned: true }));
  loop.handle("consolidate_idle", () => ({ consolidated: true }));
  return loop;
}

type Db = { prepare(sql: string): { run(...a: unknown[]): unknown }; exec(sql: string): void; pragma(s: string): unknown; transaction(fn: () => void): () => void; close(): void };
const Driver = createRequire(import.meta.url)("better-sqlite3") as new (path: string) => Db;
const bare = new Driver(join(dir, "bare.db"));
bare.pragma("journal_mode = WAL");
bare.pragma("synchronous = NORMAL");
bare.exec("CREATE TABLE phases (id INTEGER PRIMARY KEY, iteration INTEGER NOT NULL, phase INTEGER NOT NULL, output TEXT NOT NULL) STRICT");
const insert = bare.prepare("INSERT INTO phases (iteration, phase, output) VALUES (?, ?, ?)");
let bareIteration = 0;
async function bareLoop(iterations: number): Promise<void> {
  for (let i = 0; i < iterations; i++) {
    bareIteration++;
    for (let p = 0; p < PHASES; p++) {
      const output = await Promise.resolve(JSON.stringify({ phase: p, query: i }));
      bare.transaction(() => insert.run(bareIteration, p, output))();
    }
  }
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - start);
}

const sqliteStore = new SqliteStore(join(dir, "pulse.db"));
const memoryStore = new MemoryStore();
const durable = await pulseLoop(sqliteStore);
const inMemory = await pulseLoop(memoryStore);
let q = 0;
const run = (loop: Awaited<ReturnType<typeof pulseLoop>>) => async (n: number) => {
  for (let i = 0; i < n; i++) {
    const r = await loop.runIteration({ input: { query: q++ } });
    if (r.status !== "completed") throw new Error(`iteration ${r.status}: ${JSON.stringify(r.error)}`);
  }
};
const fns = { sqlite: run(durable), memory: run(inMemory), bare: bareLoop };
for (const fn of Object.values(fns)) await fn(500);
const ITER = 2000;
const samples = { sqlite: [] as number[], memory: [] as number[], bare: [] as number[] };
for (let r = 0; r < 5; r++) for (const [name, fn] of Object.entries(fns)) samples[name as keyof typeof samples].push((await timed(() => fn(ITER))) / (ITER * PHASES));
const perPhase = { sqlite: median(samples.sqlite), memory: median(samples.memory), bare: median(samples.bare) };
const perSecond = (ns: number) => Math.round(1e9 / ns);
// Pages a phase dirties (each a WAL frame at commit): the WAL's length over 200 iterations, read
// through a second connection, which may checkpoint the file as any other process could.
const probe = new Driver(join(dir, "pulse.db"));
probe.pragma("wal_checkpoint(TRUNCATE)");
await fns.sqlite(200);
const framesPerPhase = ((probe.pragma("wal_checkpoint(PASSIVE)") as { log: number }[])[0]?.log ?? NaN) / (200 * PHASES);
probe.close();
await sqliteStore.close();

// A restart on 100,000 finished iterations and one interrupted after its second phase.
const bigPath = join(dir, "big.db");
const big = new SqliteStore(bigPath);
const at = { loop_id: manifest.loop_id as string, workspace_id: "default" };
const traceOf = (n: number) => n.toString(16).padStart(32, "0");
const BIG = 100_000;
for (let n = 1; n <= BIG; n++) {
  const trace_id = traceOf(n);
  await big.commit({ ...at, trace_id, started: { number: n, entry: "retrieve_ctx", input: { query: n }, started_at: "2026-11-24T12:00:00.000Z" }, finished: { status: "completed", closed: true }, counters: { iterations: n, started: true }, audit: [] });
}
const last = traceOf(BIG + 1);
await big.commit({ ...at, trace_id: last, started: { number: BIG + 1, entry: "retrieve_ctx", input: { query: 0 }, started_at: "2026-11-24T12:00:00.000Z" }, counters: { iterations: BIG + 1, started: true }, audit: [] });
await big.commit({ ...at, trace_id: last, phase: { phase_id: "retrieve_ctx", signature: "blake3:1", status: "completed", output: { query: 0, k: 5 }, next: "route_topology" }, audit: [] });
await big.close();
const resumeStart = process.hrtime.bigint();
const reopened = new SqliteStore(bigPath);
const resumedLoop = await pulseLoop(reopened);
const pending = resumedLoop.interrupted();
const resumed = await resumedLoop.resumeInterrupted("default");
const resumeMs = Number(process.hrtime.bigint() - resumeStart) / 1e6;
if (pending.length !== 1 || resumed?.status !== "completed" || resumed.iteration !== BIG + 1) throw new Error(`resume went wrong: ${JSON.stringify({ pending, status: resumed?.status, iteration: resumed?.iteration })}`);
await reopened.close();
bare.close();
rmSync(dir, { recursive: true, force: true });

report({
  title: "Store: the 5-phase loop on SQLite (WAL, synchronous=NORMAL, one transaction per phase)",
  rows: [
    { name: "pulse on the SQLite store, phases per second", value: perSecond(perPhase.sqlite).toLocaleString("en-US") },
    { name: "pulse on the in-memory store, phases per second", value: perSecond(perPhase.memory).toLocaleString("en-US") },
    { name: "floor: bare better-sqlite3, one insert per phase per transaction", value: perSecond(perPhase.bare).toLocaleString("en-US") },
    { name: "SQLite store ÷ in-memory store (time per phase)", value: `${(perPhase.sqlite / perPhase.memory).toFixed(2)}×` },
    { name: "SQLite store ÷ bare floor (time per phase)", value: `${(perPhase.sqlite / perPhase.bare).toFixed(2)}×` },
    { name: "pages written to the WAL per phase (SQLite store; the floor writes 1)", value: framesPerPhase.toFixed(2) },
    { name: `resume: open a ${BIG.toLocaleString("en-US")}-iteration store, recover, finish the interrupted one`, value: `${resumeMs.toFixed(0)} ms` },
  ],
  target: "≥ 20,000 phases/s on SQLite; resume of a 100,000-iteration store < 1 s",
  met: perSecond(perPhase.sqlite) >= 20_000 && resumeMs < 1000,
});
