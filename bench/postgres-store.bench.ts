/**
 * Issue 18: the PostgreSQL store (adapters/postgres/store.ts) under 4 concurrent loops of the §4
 * shape (5 phases), driving the store's commit path with the units the runtime's journal
 * (src/runtime/journal.ts) commits: one per phase (its journal entry, phase.started and
 * phase.completed, an idempotency record for the four idempotent phases), the iteration's start
 * travelling with its first phase and its end with its last. All loops in one workspace, so all
 * extend one audit chain.
 *
 * Beside it, the floor: a bare `pg` loop writing the same rows, one transaction per phase, as a
 * competent user of `pg` writes them: its statements in one multi-statement query (one round trip,
 * the workspace set first; its own workspace), 4 connections at once, without hashing, the chain
 * check or the claim. The store sends one call of commit_units per workspace at a time carrying
 * every unit that queued meanwhile (store-chain.ts), so it may beat the floor: one commit (one
 * WAL flush with synchronous_commit on) and one statement per table for up to 4 phases. Interleaved
 * rounds, medians, in two durability settings: synchronous_commit on (PostgreSQL's default: a
 * commit waits for its WAL flush) and off (`?options=-c synchronous_commit=off`: a server crash
 * may lose the last fraction of a second of commits, never part of one). Then 1, 2 and 3 hosts
 * (processes) on the one database, each with 4 loops.
 *
 * DATABASE_URL (default postgresql://postgres@127.0.0.1:5432/test): a schema and roles of the
 * bench's own are created and dropped.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { migrate } from "../adapters/postgres/migrate.js";
import { PostgresStore } from "../adapters/postgres/store.js";
import { initSignatures } from "../src/runtime/signature.js";
import type { UnitOfWork } from "../src/store/contracts.js";
import type { AuditEvent } from "../src/substrates/contracts.js";
import { median, report } from "./measure.js";

const PHASES = ["retrieve_ctx", "route_topology", "act_store", "learn_outcome", "consolidate_idle"] as const;
const IDEMPOTENT = new Set(["retrieve_ctx", "route_topology", "learn_outcome", "consolidate_idle"]);
const LOOPS = 4;
const WS = "default";
const SYNC_OFF = "options=-c%20synchronous_commit%3Doff";

const hex = (n: number) => randomBytes(n).toString("hex");
const withParam = (url: string, param: string) => `${url}${url.includes("?") ? "&" : "?"}${param}`;

/** One iteration's units, as the runtime's journal commits them. */
function iterationUnits(loopId: string, n: number, workspace: string): UnitOfWork[] {
  const trace = hex(16);
  let seq = 0;
  const at = new Date().toISOString();
  const ev = (event_type: string, phase_id: string | null, data?: Record<string, unknown>): AuditEvent => ({ event_id: `${trace}-${seq}`, event_type, trace_id: trace, loop_id: loopId, phase_id, workspace_id: workspace, timestamp: at, signature: `blake3:${trace}${seq}`, seq: seq++, ...(data ? { data } : {}) });
  const base = { loop_id: loopId, workspace_id: workspace, trace_id: trace };
  const units: UnitOfWork[] = PHASES.map((phase, i) => {
    const signature = `blake3:${hex(32)}`;
    const first = i === 0;
    const last = i === PHASES.length - 1;
    return {
      ...base,
      ...(first ? { started: { number: n, entry: PHASES[0], input: { query: n }, started_at: at } } : {}),
      phase: { phase_id: phase, signature, status: "completed", output: { phase, n }, next: PHASES[i + 1] ?? null },
      ...(IDEMPOTENT.has(phase) ? { idempotency: { workspace_id: workspace, signature, canonical: `{"n":${n},"phase":"${phase}"}` } } : {}),
      ...(last ? { finished: { status: "completed", closed: true } } : {}),
      ...(first || last ? { counters: { iterations: n, started: true } } : {}),
      audit: [...(first ? [ev("iteration.started", null)] : []), ev("phase.started", phase), ev("phase.completed", phase, { kind: phase }), ...(last ? [ev("iteration.completed", null)] : [])],
    };
  });
  return units;
}

/** The same rows through bare pg: one simple query per unit, the workspace set, nothing checked. */
function bareCommit(pool: pg.Pool, schema: string, chain: { seq: number }) {
  const t = (name: string) => `"${schema}".${name}`;
  const L = (v: string | null) => (v === null ? "NULL" : pg.escapeLiteral(v));
  return async (u: UnitOfWork): Promise<void> => {
    // A workspace of its own, so the store's chain stays one that verifies.
    const ws = L(`${u.workspace_id}_bare`);
    const it = `loop_id = ${L(u.loop_id)} AND workspace_id = ${ws} AND trace_id = ${L(u.trace_id)}`;
    const s = [`SELECT set_config('pulse.workspace', ${ws}, true)`];
    if (u.started) s.push(`INSERT INTO ${t("iterations")} (loop_id, workspace_id, trace_id, number, entry, input, started_at, status) VALUES (${L(u.loop_id)}, ${ws}, ${L(u.trace_id)}, ${u.started.number}, ${L(u.started.entry)}, ${L(JSON.stringify(u.started.input))}, ${L(u.started.started_at)}, 'running')`);
    if (u.phase) s.push(`INSERT INTO ${t("phases")} (iteration_id, workspace_id, phase_id, signature, status, output, next, committed_at) SELECT id, workspace_id, ${L(u.phase.phase_id)}, ${L(u.phase.signature)}, 'completed', ${L(JSON.stringify(u.phase.output))}, ${L(u.phase.next)}, now()::text FROM ${t("iterations")} WHERE ${it}`);
    if (u.idempotency) s.push(`INSERT INTO ${t("idempotency")} (workspace_id, signature, output, loop_id, phase_id, trace_id, created_at) VALUES (${ws}, ${L(u.idempotency.signature)}, ${L(u.idempotency.canonical)}, ${L(u.loop_id)}, ${L(u.phase?.phase_id ?? null)}, ${L(u.trace_id)}, now()::text) ON CONFLICT DO NOTHING`);
    const rows = u.audit.map((e) => `(${ws}, ${chain.seq++}, ${L(e.event_id)}, ${L(e.event_type)}, ${L(e.trace_id)}, ${L(e.loop_id)}, ${L(e.phase_id)}, ${e.seq}, ${L(e.timestamp)}, ${L(e.signature)}, ${e.data ? L(JSON.stringify(e.data)) : "NULL"}, 'blake3:prev', 'blake3:hash')`);
    s.push(`INSERT INTO ${t("audit_events")} (workspace_id, chain_seq, event_id, event_type, trace_id, loop_id, phase_id, seq, timestamp, signature, data, prev_hash, hash) VALUES ${rows.join(", ")}`);
    if (u.finished) s.push(`UPDATE ${t("iterations")} SET status = 'completed', closed = true, finished_at = now()::text WHERE ${it}`);
    if (u.counters) s.push(`INSERT INTO ${t("loops")} (loop_id, workspace_id, snapshot, updated_at) VALUES (${L(u.loop_id)}, ${ws}, ${L(JSON.stringify(u.counters))}, now()::text) ON CONFLICT (loop_id, workspace_id) DO UPDATE SET snapshot = EXCLUDED.snapshot`);
    await pool.query(s.join(";\n"));
  };
}

/** `LOOPS` loops committing iterations through `commit` for `ms`: phases per second. */
async function loops(commit: (u: UnitOfWork) => Promise<void>, prefix: string, ms: number, workspace = WS): Promise<number> {
  const until = Date.now() + ms;
  let phases = 0;
  const start = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: LOOPS }, async (_, l) => {
      for (let n = 1; Date.now() < until; n++) {
        for (const u of iterationUnits(`${prefix}.loop${l}`, n, workspace)) await commit(u);
        phases += PHASES.length;
      }
    }),
  );
  return phases / (Number(process.hrtime.bigint() - start) / 1e9);
}

// A host of the multi-host run: 4 loops on the store for the given time, then its rate on stdout.
if (process.argv[2] === "--host") {
  const [url, ms, name, workspace] = process.argv.slice(3) as [string, string, string, string];
  await initSignatures();
  const store = await PostgresStore.open(url);
  const go = Number(ms.split("@")[1]);
  // Warm up (compile, fill the pool) until every host starts together.
  await loops((u) => store.commit(u), `${name}.warm`, Math.max(0, go - Date.now() - 300), workspace);
  await new Promise((r) => setTimeout(r, Math.max(0, go - Date.now())));
  const rate = await loops((u) => store.commit(u), name, Number(ms.split("@")[0]), workspace);
  await store.close();
  process.stdout.write(`${rate}\n`);
  process.exit(0);
}

async function hosts(n: number, url: string, ms: number, ownWorkspaces: boolean): Promise<number> {
  const go = Date.now() + 3000; // every host started and warm before the clock starts
  const rates = await Promise.all(
    Array.from({ length: n }, (_, h) => {
      const child = spawn(process.execPath, [fileURLToPath(import.meta.url), "--host", url, `${ms}@${go}`, `host${h}.${hex(3)}`, ownWorkspaces ? `ws${h}` : WS], { stdio: ["ignore", "pipe", "inherit"] });
      let out = "";
      child.stdout.on("data", (d: Buffer) => (out += d.toString()));
      return new Promise<number>((resolve, reject) => child.on("exit", (code) => (code === 0 ? resolve(Number(out.trim())) : reject(new Error(`host ${h} exited with ${code}`)))));
    }),
  );
  return rates.reduce((a, b) => a + b, 0);
}

const base = process.env.DATABASE_URL || "postgresql://postgres@127.0.0.1:5432/test";
const schema = `pulse_bench_${hex(4)}`;
const url = withParam(base, `schema=${schema}`);
const admin = new pg.Client({ connectionString: base });
await admin.connect();
await initSignatures();
try {
  await migrate(url);
  const app = new URL(url);
  app.username = `${schema}_app`;
  app.password = "";
  const appUrl = app.toString();
  const bareUrl = (sync: boolean) => {
    const u = new URL(base);
    u.username = `${schema}_app`;
    u.password = "";
    return sync ? u.toString() : withParam(u.toString(), SYNC_OFF);
  };
  const ROUND_MS = 2500;
  const measured: Record<string, { store: number[]; bare: number[] }> = {};
  const bareChain = { seq: 1e9 };
  for (const mode of ["on", "off"] as const) {
    const store = await PostgresStore.open(mode === "on" ? appUrl : withParam(appUrl, SYNC_OFF));
    const pool = new pg.Pool({ connectionString: bareUrl(mode === "on"), max: LOOPS });
    const bare = bareCommit(pool, schema, bareChain);
    await loops((u) => store.commit(u), `warm.${mode}`, 1000);
    await loops(bare, `warmbare.${mode}`, 1000);
    measured[mode] = { store: [], bare: [] };
    for (let r = 0; r < 3; r++) {
      measured[mode].store.push(await loops((u) => store.commit(u), `s${r}.${mode}`, ROUND_MS));
      measured[mode].bare.push(await loops(bare, `b${r}.${mode}`, ROUND_MS));
    }
    await store.close();
    await pool.end();
  }
  const scaled: number[] = [];
  const spread: number[] = [];
  for (const n of [1, 2, 3]) {
    scaled.push(await hosts(n, withParam(appUrl, SYNC_OFF), 3000, false));
    spread.push(await hosts(n, withParam(appUrl, SYNC_OFF), 3000, true));
  }
  const check = await PostgresStore.open(appUrl);
  const [chain] = await check.verifyAudit(WS);
  await check.close();

  const m = (mode: "on" | "off", k: "store" | "bare") => median(measured[mode]![k]);
  const fmt = (n: number) => Math.round(n).toLocaleString("en-US");
  report({
    title: "PostgreSQL store: 4 concurrent loops of 5 phases, committed as the runtime's journal does, beside bare pg",
    rows: [
      { name: "pulse store, synchronous_commit=off, phases/s", value: fmt(m("off", "store")) },
      { name: "bare pg, same rows, synchronous_commit=off, phases/s", value: fmt(m("off", "bare")) },
      { name: "ratio store / bare (synchronous_commit=off)", value: `${(m("off", "store") / m("off", "bare")).toFixed(2)}×` },
      { name: "pulse store, synchronous_commit=on (default), phases/s", value: fmt(m("on", "store")) },
      { name: "bare pg, same rows, synchronous_commit=on, phases/s", value: fmt(m("on", "bare")) },
      { name: "ratio store / bare (synchronous_commit=on)", value: `${(m("on", "store") / m("on", "bare")).toFixed(2)}×` },
      { name: "1 / 2 / 3 hosts (processes, 4 loops each), one workspace, off, phases/s", value: scaled.map(fmt).join(" / ") },
      { name: "1 / 2 / 3 hosts (processes, 4 loops each), a workspace each, off, phases/s", value: spread.map(fmt).join(" / ") },
      { name: "audit chain of the workspace after the run", value: chain?.ok ? `verifies, ${fmt(chain.events)} events` : `BROKEN: ${JSON.stringify(chain)}` },
      { name: "load average when run (2 cores)", value: loadavg()[0]!.toFixed(1) },
      { name: "round length, rounds (median)", value: `${ROUND_MS / 1000} s, 3` },
    ],
    target: "≥ 5,000 phases/s with 4 concurrent loops",
    met: m("off", "store") >= 5000 || m("on", "store") >= 5000,
  });
} finally {
  await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  for (const role of [`${schema}_app`, `${schema}_owner`]) {
    if ((await admin.query("SELECT 1 FROM pg_roles WHERE rolname = $1", [role])).rowCount === 0) continue;
    await admin.query(`DROP OWNED BY "${role}" CASCADE`);
    await admin.query(`DROP ROLE "${role}"`);
  }
  await admin.end();
}
