/**
 * The PostgreSQL Store beyond the contract suite (test/store/contract.test.ts runs that on it):
 * what the database enforces on the rows the store writes, checked with raw SQL as the runtime's
 * role; the SET ROLE switch an owner's connection gets; two hosts racing on one phase signature;
 * units of one workspace committed back to back by several hosts into one unbroken chain; the
 * upgrade from schema version 1; and the database going away and coming back.
 */
import { createServer, connect as tcpConnect, type Server, type Socket } from "node:net";
import { afterEach, beforeAll, expect, it } from "vitest";
import { migrate } from "../../../adapters/postgres/migrate.js";
import { migrations, SCHEMA_VERSION } from "../../../adapters/postgres/schema.js";
import { parsePostgresUrl } from "../../../adapters/postgres/address.js";
import { PostgresStore } from "../../../adapters/postgres/store.js";
import { openStore } from "../../../adapters/store.js";
import { initSignatures } from "../../../src/runtime/signature.js";
import { StoreError, type UnitOfWork } from "../../../src/store/contracts.js";
import type { AuditEvent } from "../../../src/substrates/contracts.js";
import { describeWith, postgresService } from "../../helpers/services.js";
import { clientAs, pgSchema, type PgSchema } from "./helpers.js";
import { runBin } from "../../cli/run-bin.js";

beforeAll(() => initSignatures());

const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const event = (trace: string, seq: number, workspace: string, over: Partial<AuditEvent> = {}): AuditEvent => ({ event_id: `${trace}-${seq}`, event_type: "phase.completed", trace_id: trace, loop_id: "examples.hello", phase_id: "act", workspace_id: workspace, timestamp: "2026-11-24T12:00:00.000Z", signature: "blake3:ab", seq, ...over });
const trace = (n: number) => `a${n.toString(16).padStart(31, "0")}`;
const unit = (workspace: string, t: string, over: Partial<UnitOfWork> = {}): UnitOfWork => ({
  loop_id: "examples.hello",
  workspace_id: workspace,
  trace_id: t,
  started: { number: 1, entry: "act", input: { q: 1 }, started_at: "2026-11-24T12:00:00.000Z" },
  phase: { phase_id: "act", signature: `blake3:${t}`, status: "completed", output: { ok: true }, next: null },
  outbox: [{ event_id: `evt-${t}`, connection_id: "c1", to_loop: "b.loop", envelope: { id: `evt-${t}` } }],
  inbox: { event_id: `in-${t}` },
  counters: { iterations: 1, started: true },
  audit: [event(t, 0, workspace)],
  ...over,
});

describeWith(await postgresService(), "PostgreSQL Store: what the database enforces on its rows", (url) => {
  let s: PgSchema;
  const open: { close(): Promise<unknown> }[] = [];
  afterEach(async () => {
    for (const o of open.splice(0)) await o.close();
    await s?.drop();
  });
  const store = async (u: string, notes: string[] = []): Promise<PostgresStore> => {
    const st = await PostgresStore.open(u, { onNote: (n) => notes.push(n) });
    open.push(st);
    return st;
  };
  const fresh = async () => {
    s = pgSchema(url);
    await migrate(s.url);
  };

  it("raw SQL as the runtime role: another workspace's rows are invisible and cannot be written, the audit cannot be changed; its own workspace can be", async () => {
    await fresh();
    const st = await store(s.appUrl);
    const memory = st.memory("memory://g");
    for (const ws of ["acme", "globex"]) {
      const ctx = { trace_id: TRACE, workspace_id: ws };
      const { tx_id } = await memory.begin_transaction({}, ctx);
      await memory.store_node({ node: { id: `n-${ws}`, content: ws } }, { ...ctx, tx_id });
      await memory.commit_transaction({ tx_id }, ctx);
      await st.commit({ ...unit(ws, TRACE), memory: { substrate: memory, tx_id } });
    }
    const c = await clientAs(s.appUrl);
    open.push({ close: () => c.end() });
    const t = (name: string) => `"${s.schema}".${name}`;
    const asWorkspace = async <T>(ws: string, fn: () => Promise<T>, keep = false): Promise<T> => {
      await c.query("BEGIN");
      await c.query("SELECT set_config('pulse.workspace', $1, true)", [ws]);
      try {
        const r = await fn();
        await c.query(keep ? "COMMIT" : "ROLLBACK");
        return r;
      } catch (error) {
        await c.query("ROLLBACK");
        throw error;
      }
    };
    for (const table of ["iterations", "phases", "audit_events", "audit_chains", "loops", "outbox", "inbox", "memory_state"]) {
      const seen = await asWorkspace("globex", async () => (await c.query(`SELECT DISTINCT workspace_id FROM ${t(table)}`)).rows);
      expect(seen, table).toEqual([{ workspace_id: "globex" }]);
      expect((await asWorkspace("globex", () => c.query(`SELECT 1 FROM ${t(table)} WHERE workspace_id = 'acme'`))).rowCount, table).toBe(0);
    }
    const insert = (ws: string, tr: string) => c.query(`INSERT INTO ${t("iterations")} (loop_id, workspace_id, trace_id, number, entry, input, started_at, status) VALUES ('l', $1, $2, 1, 'act', '{}', 'now', 'running')`, [ws, tr]);
    await expect(asWorkspace("globex", () => insert("acme", "forged"))).rejects.toThrow(/row-level security/);
    await asWorkspace("globex", () => insert("globex", "own"), true); // the near-miss: its own workspace
    await expect(asWorkspace("globex", () => c.query(`UPDATE ${t("audit_events")} SET event_type = 'forged'`))).rejects.toThrow(/permission denied/);
    await expect(asWorkspace("globex", () => c.query(`DELETE FROM ${t("audit_events")}`))).rejects.toThrow(/permission denied/);
    await expect(s.admin(`UPDATE ${t("audit_events")} SET event_type = 'forged'`)).rejects.toThrow(/append-only/);
    await expect(s.admin(`DELETE FROM ${t("audit_events")}`)).rejects.toThrow(/append-only/);
    // The chain heads too, even to an owner: none moved back (it would hide events cut from the end), none deleted.
    await expect(s.admin(`UPDATE ${t("audit_chains")} SET next_seq = next_seq - 1`)).rejects.toThrow(/audit chain heads only move forward \(PULSE §7\.3\): UPDATE refused/);
    await expect(s.admin(`UPDATE ${t("audit_chains")} SET head = 'blake3:forged'`)).rejects.toThrow(/only move forward/);
    await expect(s.admin(`DELETE FROM ${t("audit_chains")}`)).rejects.toThrow(/DELETE refused/);
    await expect(s.admin(`TRUNCATE ${t("audit_chains")}`)).rejects.toThrow(/TRUNCATE refused/);
    // The near-miss: appending to its own workspace's audit is what the runtime does.
    await st.commit({ loop_id: "examples.hello", workspace_id: "globex", trace_id: TRACE, audit: [event(TRACE, 1, "globex")] });
    // The iteration inserted by hand has no audit event: verify's cross-check of the journal names it.
    expect(await st.verifyAudit()).toEqual([
      { workspace_id: "acme", ok: true, events: 1 },
      { workspace_id: "globex", ok: false, events: 2, broken: { chain_seq: -1, event_id: null, trace_id: "own", reason: "trace own of l: the journal committed this iteration, and the audit trail has no event of it" } },
    ]);
    expect((await st.interrupted("l")).map((i) => [i.workspace_id, i.trace_id])).toEqual([["globex", "own"]]);
  });

  it("a host connected as an owner or superuser works as the runtime role and says so; one connected as that role needs no switch", async () => {
    await fresh();
    const notes: string[] = [];
    const owner = await openStore(s.url, { note: (n) => notes.push(n) });
    open.push(owner);
    expect(notes).toEqual([`connected to ${parsePostgresUrl(s.url).display} as postgres: working as ${s.appRole} (SET ROLE), so row-level security applies`]);
    await owner.commit(unit("acme", TRACE));
    const rows = await s.admin(`SELECT count(*)::int AS n FROM "${s.schema}".iterations`);
    expect(rows.rows[0].n).toBe(1);
    const appNotes: string[] = [];
    open.push(await openStore(s.appUrl, { note: (n) => appNotes.push(n) }));
    expect(appNotes).toEqual([]);
    expect(owner.description).toBe(`postgres ${parsePostgresUrl(s.url).display} schema ${s.schema}`);
  });

  it("two hosts racing on the same phase signatures: each phase's unit commits once, so its memory write and audit land once; the chain stays whole", async () => {
    await fresh();
    const hosts = [await store(s.appUrl), await store(s.url)];
    const signatures = Array.from({ length: 40 }, (_, i) => `blake3:${i.toString(16).padStart(64, "0")}`);
    const outcomes = await Promise.allSettled(
      hosts.flatMap((host, h) =>
        signatures.map(async (sig, i) => {
          const memory = host.memory("memory://g");
          const ctx = { trace_id: trace(i * 2 + h), workspace_id: "acme" };
          const { tx_id } = await memory.begin_transaction({}, ctx);
          await memory.store_node({ node: { id: `effect-${i}-host-${h}`, content: "side effect" } }, { ...ctx, tx_id });
          await memory.commit_transaction({ tx_id }, ctx);
          await host.commit({ ...unit("acme", trace(i * 2 + h), { phase: { phase_id: "act", signature: sig, status: "completed", output: { h }, next: null } }), idempotency: { workspace_id: "acme", signature: sig, canonical: `{"h":${h}}` }, memory: { substrate: memory, tx_id } });
        }),
      ),
    );
    const refused = outcomes.filter((o) => o.status === "rejected").map((o) => (o as PromiseRejectedResult).reason as StoreError);
    expect(refused.map((e) => e.message).filter((m) => !/was committed first/.test(m))).toEqual([]);
    expect(refused).toHaveLength(40);
    expect(refused.every((e) => e instanceof StoreError && e.code === "STORE_IDEMPOTENCY_CLAIMED")).toBe(true);
    expect(refused[0]!.message).toMatch(/was committed first by another unit/);
    const effects = await s.admin(`SELECT key FROM "${s.schema}".memory_state WHERE kind = 'node'`);
    const perPhase = new Map<string, number>();
    for (const r of effects.rows as { key: string }[]) {
      const phase = /^effect-(\d+)-/.exec(r.key)?.[1] as string;
      perPhase.set(phase, (perPhase.get(phase) ?? 0) + 1);
    }
    expect(perPhase.size).toBe(40);
    expect([...perPhase.values()].every((n) => n === 1)).toBe(true);
    expect(await hosts[0]!.verifyAudit()).toEqual([{ workspace_id: "acme", ok: true, events: 40 }]);
    // The near-miss: the same signature in another workspace is another claim.
    await hosts[0]!.commit({ ...unit("globex", TRACE), idempotency: { workspace_id: "globex", signature: signatures[0]!, canonical: "1" } });
    expect((await hosts[0]!.idempotency("examples.hello", 100)).filter((r) => r.signature === signatures[0])).toHaveLength(2);
  });

  it("units of one workspace sent back to back by three hosts, one unit failing among them, make one unbroken chain", async () => {
    await fresh();
    const hosts = [await store(s.appUrl), await store(s.appUrl), await store(s.url)];
    await hosts[0]!.commit({ ...unit("acme", trace(1)), idempotency: { workspace_id: "acme", signature: "blake3:taken", canonical: "1" } });
    const sent = Array.from({ length: 150 }, (_, i) => {
      const host = hosts[i % 3]!;
      const t = trace(1000 + i);
      // Unit 75 claims a signature already claimed: it fails in the database, after its events were hashed.
      const bad = i === 75 ? { idempotency: { workspace_id: "acme", signature: "blake3:taken", canonical: "1" } } : {};
      return host.commit(unit("acme", t, { audit: [event(t, 0, "acme"), event(t, 1, "acme")], ...bad }));
    });
    const results = await Promise.allSettled(sent);
    expect(results.map((r, i) => [i, r.status]).filter(([, status]) => status === "rejected")).toEqual([[75, "rejected"]]);
    expect(await hosts[1]!.verifyAudit("acme")).toEqual([{ workspace_id: "acme", ok: true, events: 2 * 149 + 1 }]);
    const page = await hosts[2]!.queryAudit({ workspace_id: "acme", limit: 1000 });
    expect(new Set(page.events.map((e) => e.event.event_id)).size).toBe(299);
  });

  it("units queued while a call is in flight are sent together: each still whole or refused alone, the rows as one transaction per unit leaves them", async () => {
    await fresh();
    const st = await store(s.appUrl);
    const memory = st.memory("memory://g");
    const t = trace(7);
    const ctx = { trace_id: t, workspace_id: "acme" };
    const node = async (id: string) => {
      const { tx_id } = await memory.begin_transaction({}, ctx);
      await memory.store_node({ node: { id, content: "side effect" } }, { ...ctx, tx_id });
      await memory.commit_transaction({ tx_id }, ctx);
      return { substrate: memory, tx_id };
    };
    const writes: Awaited<ReturnType<typeof node>>[] = [];
    for (let i = 0; i < 12; i++) writes.push(await node(`v${i}`));
    // Twelve units of one iteration and workspace, none awaited: the first call carries the first, the next the rest.
    const sent = writes.map((write, i) =>
      st.commit({
        loop_id: "examples.hello",
        workspace_id: "acme",
        trace_id: t,
        ...(i === 0 ? { started: { number: 1, entry: "p0", input: {}, started_at: "2026-11-24T12:00:00.000Z" } } : {}),
        phase: { phase_id: `p${i}`, signature: `blake3:p${i}`, status: "completed", output: { i }, next: i === 11 ? null : `p${i + 1}` },
        // Unit 9 claims the signature unit 4 claims, in the same call: only unit 9 is refused.
        idempotency: { workspace_id: "acme", signature: i === 9 ? "blake3:p4" : `blake3:p${i}`, canonical: `{"i":${i}}` },
        counters: { iterations: i, started: true },
        ...(i === 11 ? { finished: { status: "completed", closed: true } } : {}),
        memory: write,
        audit: [event(t, i, "acme", { phase_id: `p${i}` })],
      }),
    );
    const results = await Promise.allSettled(sent);
    expect(results.map((r, i) => [i, r.status]).filter(([, status]) => status === "rejected")).toEqual([[9, "rejected"]]);
    expect(((results[9] as PromiseRejectedResult).reason as StoreError).code).toBe("STORE_IDEMPOTENCY_CLAIMED");
    const rows = async (sql: string) => (await s.admin(sql.replaceAll("T.", `"${s.schema}".`))).rows as Record<string, unknown>[];
    expect((await rows("SELECT phase_id FROM T.phases ORDER BY id")).map((r) => r.phase_id)).toEqual(["p0", "p1", "p2", "p3", "p4", "p5", "p6", "p7", "p8", "p10", "p11"]);
    expect(await rows("SELECT status, closed FROM T.iterations")).toEqual([{ status: "completed", closed: true }]);
    expect((await st.counters("examples.hello")).get("acme")).toEqual({ iterations: 11, started: true });
    // The refused unit's memory write did not land; every other one did, in order.
    expect((await rows("SELECT key FROM T.memory_state WHERE kind = 'node' ORDER BY id")).map((r) => r.key)).toEqual(["v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v10", "v11"]);
    // The chain is whole; the refused unit's event (seq 9) was never stored, a gap verify names (the runtime gives its number to the next event instead).
    expect(await st.verifyAudit()).toEqual([{ workspace_id: "acme", ok: false, events: 11, broken: { chain_seq: -1, event_id: null, trace_id: t, reason: `trace ${t} of examples.hello: its event seq 9 is missing (the next one is seq 10)` } }]);
    expect((await st.idempotency("examples.hello", 100)).find((r) => r.signature === "blake3:p4")?.canonical).toBe(`{"i":4}`);
  });

  it("pulse store export --jsonl --store postgres://… streams every row of every workspace as {table, row}; a store that keeps nothing is refused", async () => {
    await fresh();
    const st = await store(s.appUrl);
    // 700 audit events in acme: more than one cursor fetch (500 rows).
    await Promise.all(Array.from({ length: 350 }, (_, i) => st.commit(unit("acme", trace(i), { audit: [event(trace(i), 0, "acme"), event(trace(i), 1, "acme")] }))));
    await st.commit(unit("globex", TRACE));
    const info = await st.info();
    const out = runBin("pulse", ["store", "export", "--jsonl", "--store", s.appUrl], { timeoutMs: 60_000 });
    expect(out.stderr).toBe("");
    expect(out.code).toBe(0);
    const lines = out.stdout.trim().split("\n").map((l) => JSON.parse(l) as { table: string; row: Record<string, unknown> });
    const count = (table: string) => lines.filter((l) => l.table === table).length;
    for (const table of ["iterations", "phases", "audit_events", "audit_chains", "loops", "outbox", "inbox"]) expect(count(table), table).toBe(info.counts[table]);
    expect(count("audit_events")).toBe(701);
    expect(lines.filter((l) => l.table === "workspaces").map((l) => l.row.workspace_id)).toEqual(["acme", "globex"]);
    // Row-level security stayed on: each workspace's rows came under its own setting, acme's first, in order.
    const audit = lines.filter((l) => l.table === "audit_events").map((l) => l.row);
    expect(audit.map((r) => r.workspace_id)).toEqual([...Array(700).fill("acme"), "globex"]);
    expect(audit.slice(0, 700).map((r) => r.chain_seq)).toEqual(Array.from({ length: 700 }, (_, i) => i));
    expect(audit[0]).toMatchObject({ event_type: "phase.completed", position: expect.any(Number) as number, prev_hash: expect.stringMatching(/^blake3:/) as string });
    // Connected as an owner it works as the runtime's role, says so on stderr, and exports the same rows.
    const owner = runBin("pulse", ["store", "export", "--jsonl", "--store", s.url], { timeoutMs: 60_000 });
    expect(owner.code).toBe(0);
    expect(owner.stderr).toMatch(/working as .*_app \(SET ROLE\)/);
    expect(owner.stdout).toBe(out.stdout);
    // Near-misses refused in one line: a store that keeps nothing (usage, 2), a schema never migrated (1).
    const memory = runBin("pulse", ["store", "export", "--jsonl", "--store", "memory:"]);
    expect([memory.code, memory.stderr.trim()]).toEqual([2, expect.stringMatching(/works on a SQLite or PostgreSQL store .*memory: keeps nothing to export$/)]);
    const bare = new URL(s.url);
    bare.searchParams.set("schema", `${s.schema}_none`);
    const missing = runBin("pulse", ["store", "export", "--jsonl", "--store", bare.toString()]);
    expect(missing.code).toBe(1);
    // The command it suggests names the schema: run as is, it migrates this one, not the default.
    expect(missing.stderr).toMatch(new RegExp(`^pulse store export: connected to .* as postgres, which cannot work as ${s.schema}_none_app .*: run pulse store migrate --store 'postgres(ql)?://postgres@[^']*[?&]schema=${s.schema}_none' with an owner's credentials first`));
    expect(missing.stderr.trim()).not.toContain("\n");
    expect(missing.stdout).toBe("");
  });

  it("a schema at version 1 is brought to the current version by migrate, and the store finds the workspaces it already held", async () => {
    s = pgSchema(url);
    const address = parsePostgresUrl(s.url);
    await s.admin(`CREATE ROLE "${s.ownerRole}" NOLOGIN`);
    await s.admin(`CREATE ROLE "${s.appRole}" LOGIN NOSUPERUSER NOBYPASSRLS`);
    await s.admin(`CREATE SCHEMA "${s.schema}" AUTHORIZATION "${s.ownerRole}"`);
    await s.admin(`SET ROLE "${s.ownerRole}"; ${migrations(address)[0]}; INSERT INTO "${s.schema}".meta VALUES ('schema_version', '1'); RESET ROLE`);
    // A version-1 trail (the audit substrate wrote it): a chain with one event.
    await s.admin(`INSERT INTO "${s.schema}".audit_chains VALUES ('acme', 0, 'blake3:${"0".repeat(64)}')`);
    await expect(PostgresStore.open(s.appUrl)).rejects.toThrow(new RegExp(`is at store schema version 1, this pulse needs ${SCHEMA_VERSION}: run pulse store migrate --store 'postgres(ql)?://${s.appRole}@[^']*[?&]schema=${s.schema}'$`));
    expect(await migrate(s.url)).toMatchObject({ from: 1, to: SCHEMA_VERSION });
    const st = await store(s.appUrl);
    expect(await st.verifyAudit()).toEqual([{ workspace_id: "acme", ok: true, events: 0 }]);
  });

  it("PostgreSQL going away: a commit fails in one line and commits nothing; once the server answers again the next commit goes through", async () => {
    await fresh();
    // A TCP relay stands between the host and PostgreSQL: closing it is the server going away.
    const target = new URL(url);
    const sockets = new Set<Socket>();
    const relay: Server = createServer((inbound) => {
      const outbound = tcpConnect(Number(target.port || 5432), target.hostname);
      for (const sock of [inbound, outbound]) (sockets.add(sock), sock.on("error", () => undefined), sock.on("close", () => sockets.delete(sock)));
      inbound.pipe(outbound).pipe(inbound);
    });
    await new Promise<void>((r) => relay.listen(0, "127.0.0.1", r));
    const port = (relay.address() as { port: number }).port;
    const via = new URL(s.appUrl);
    via.host = `127.0.0.1:${port}`;
    const st = await store(via.toString());
    await st.commit(unit("acme", trace(1)));
    const goAway = () => new Promise<void>((r) => (sockets.forEach((sock) => sock.destroy()), relay.close(() => r())));
    await goAway();
    const down = await st.commit(unit("acme", trace(2))).catch((e: unknown) => e as StoreError);
    expect(down).toBeInstanceOf(StoreError);
    expect((down as StoreError).code).toBe("STORE_UNAVAILABLE");
    expect((down as StoreError).message).toMatch(new RegExp(`^PostgreSQL at postgres(ql)?://${s.appRole}@127\\.0\\.0\\.1:${port}/\\w+ is unavailable: .*; (nothing of this unit was committed|the unit is all committed or not at all, which one is known once the server answers again)$`));
    expect((down as StoreError).message).not.toContain("\n");
    // Nothing reached the server: the interrupted unit is not there.
    expect((await s.admin(`SELECT count(*)::int AS n FROM "${s.schema}".iterations WHERE trace_id = $1`, [trace(2)])).rows[0].n).toBe(0);
    await new Promise<void>((r) => relay.listen(port, "127.0.0.1", r));
    await st.commit(unit("acme", trace(3)));
    expect((await st.verifyAudit()).map((r) => [r.ok, r.events])).toEqual([[true, 2]]);
    expect((await st.counters("examples.hello")).get("acme")).toEqual({ iterations: 1, started: true });
    await st.close();
    open.splice(open.indexOf(st), 1);
    await goAway();
  });

  it("an unreachable server or an unmigrated schema is one clear line, before any work", async () => {
    const down = await openStore("postgres://pulse:hunter2@127.0.0.1:1/test", { note: () => undefined }).catch((e: unknown) => e as StoreError);
    expect(down).toBeInstanceOf(StoreError);
    expect((down as StoreError).message).toMatch(/^cannot connect to PostgreSQL at postgres:\/\/pulse:\*\*\*@127\.0\.0\.1:1\/test: .*ECONNREFUSED/);
    s = pgSchema(url);
    await expect(openStore(s.url, { note: () => undefined })).rejects.toThrow(/run pulse store migrate --store/);
    await expect(openStore("postgres://127.0.0.1/test?schema=Bad-Name")).rejects.toThrow(/schema="Bad-Name": a schema name is/);
  });
});
