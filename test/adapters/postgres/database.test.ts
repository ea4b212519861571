/**
 * What the database itself enforces for the PostgreSQL store, checked with raw SQL as the
 * runtime's role (as a superuser every RLS test would pass vacuously): migrations and roles,
 * SET ROLE for an owner's connection, tenants isolated by row-level security, an append-only
 * audit table, and idempotency claims that two hosts racing cannot both win.
 */
import { afterEach, expect, it } from "vitest";
import { claimSignature, migrate, PostgresDatabase, PostgresStoreError, SCHEMA_VERSION } from "../../../adapters/postgres/index.js";
import { describeWith, postgresService } from "../../helpers/services.js";
import { clientAs, pgSchema, type PgSchema } from "./helpers.js";

const claim = (workspace: string, signature: string) => ({ workspace_id: workspace, signature, output: '{"b":1,"a":2}', loop_id: "t.a", phase_id: "p", trace_id: "4bf92f3577b34da6a3ce929d0e0e4736", created_at: "2026-04-10T12:00:00.000Z" });

describeWith(await postgresService(), "PostgreSQL store: the database's guarantees", (url) => {
  let s: PgSchema;
  const open: { close(): Promise<unknown> }[] = [];
  const fresh = () => (s = pgSchema(url));
  afterEach(async () => {
    for (const o of open.splice(0)) await o.close();
    await s?.drop();
  });
  const db = async (u: string, notes: string[] = []) => {
    const d = await PostgresDatabase.open(u, { onNote: (n) => notes.push(n) });
    open.push(d);
    return d;
  };

  it("migrate creates the schema, an owner role that cannot log in and a runtime role that cannot bypass RLS; a second run changes nothing", async () => {
    fresh();
    const first = await migrate(s.url);
    expect(first).toMatchObject({ schema: s.schema, from: 0, to: SCHEMA_VERSION, rolesCreated: [s.ownerRole, s.appRole] });
    const roles = await s.admin("SELECT rolname, rolcanlogin, rolsuper, rolbypassrls FROM pg_roles WHERE rolname = ANY($1) ORDER BY rolname", [[s.appRole, s.ownerRole]]);
    expect(roles.rows).toEqual([
      { rolname: s.appRole, rolcanlogin: true, rolsuper: false, rolbypassrls: false },
      { rolname: s.ownerRole, rolcanlogin: false, rolsuper: false, rolbypassrls: false },
    ]);
    const owners = await s.admin("SELECT DISTINCT tableowner FROM pg_tables WHERE schemaname = $1", [s.schema]);
    expect(owners.rows).toEqual([{ tableowner: s.ownerRole }]);
    expect(await migrate(s.url)).toMatchObject({ from: SCHEMA_VERSION, to: SCHEMA_VERSION, rolesCreated: [] });
  });

  it("a schema written by a newer pulse is refused by migrate and by open, naming both versions", async () => {
    fresh();
    await migrate(s.url);
    await s.admin(`UPDATE "${s.schema}".meta SET value = '99' WHERE key = 'schema_version'`);
    await expect(migrate(s.url)).rejects.toThrow(new RegExp(`newer pulse \\(store schema version 99\\); this pulse reads store schema versions up to ${SCHEMA_VERSION}`));
    await expect(PostgresDatabase.open(s.url)).rejects.toThrow(new RegExp(`store schema version 99.*up to ${SCHEMA_VERSION}`));
  });

  it("an owner's connection switches to the runtime role and says so; the runtime role's own connection needs no switch", async () => {
    fresh();
    await expect(PostgresDatabase.open(s.url)).rejects.toThrow(/cannot work as .*_app.*run pulse store migrate --store/);
    await migrate(s.url);
    const notes: string[] = [];
    const asOwner = await db(s.url, notes);
    expect(notes).toEqual([expect.stringMatching(new RegExp(`as postgres: working as ${s.appRole} \\(SET ROLE\\), so row-level security applies`))]);
    expect((await asOwner.pool.query("SELECT current_user AS u")).rows[0].u).toBe(s.appRole);
    const appNotes: string[] = [];
    const asApp = await db(s.appUrl, appNotes);
    expect(appNotes).toEqual([]);
    expect((await asApp.pool.query("SELECT current_user AS u")).rows[0].u).toBe(s.appRole);
  });

  it("row-level security, raw SQL as the runtime role: another workspace's rows are invisible and cannot be written; one's own are", async () => {
    fresh();
    await migrate(s.url);
    const c = await clientAs(s.appUrl);
    open.push({ close: () => c.end() });
    const t = `"${s.schema}".idempotency`;
    const insert = (ws: string, sig: string) => c.query(`INSERT INTO ${t} (workspace_id, signature, output, loop_id, phase_id, trace_id, created_at) VALUES ($1, $2, '{}', 'l', 'p', 't', 'now')`, [ws, sig]);
    const inWs = async <T>(ws: string, fn: () => Promise<T>): Promise<T> => {
      await c.query("BEGIN");
      await c.query("SELECT set_config('pulse.workspace', $1, true)", [ws]);
      try {
        return await fn();
      } finally {
        await c.query("ROLLBACK").catch(() => undefined);
      }
    };
    await c.query("BEGIN");
    await c.query("SELECT set_config('pulse.workspace', 'acme', true)");
    await insert("acme", "sig_a"); // the near-miss: one's own workspace is writable
    await c.query("COMMIT");
    expect(await inWs("acme", async () => (await c.query(`SELECT signature FROM ${t}`)).rows)).toEqual([{ signature: "sig_a" }]);
    expect(await inWs("globex", async () => (await c.query(`SELECT signature FROM ${t} WHERE workspace_id = 'acme'`)).rows)).toEqual([]);
    await expect(inWs("globex", () => insert("acme", "sig_b"))).rejects.toThrow(/row-level security/);
    // No workspace set: nothing is visible (the setting reads '' or NULL after a transaction).
    expect((await c.query(`SELECT count(*)::int AS n FROM ${t}`)).rows[0].n).toBe(0);
    // The setting ended with its transaction: the pooled connection carries no tenant along.
    expect((await c.query("SELECT coalesce(current_setting('pulse.workspace', true), '') AS w")).rows[0].w).toBe("");
    await expect(c.query(`ALTER TABLE ${t} DISABLE ROW LEVEL SECURITY`)).rejects.toThrow(/must be owner/);
  });

  it("the audit table is append-only: the runtime role may not UPDATE or DELETE, and triggers refuse even the owner", async () => {
    fresh();
    await migrate(s.url);
    const d = await db(s.url);
    const t = d.table("audit_events");
    const row = [1, "evt_1", "phase.completed", "trace", "t.a", "p", 0, "2026-04-10T12:00:00.000Z", "blake3:x", "blake3:0", "blake3:1"];
    await d.inWorkspace("acme", (c) => c.query(`INSERT INTO ${t} (workspace_id, chain_seq, event_id, event_type, trace_id, loop_id, phase_id, seq, timestamp, signature, prev_hash, hash) VALUES ('acme', $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`, row));
    await expect(d.inWorkspace("acme", (c) => c.query(`UPDATE ${t} SET event_type = 'forged'`))).rejects.toThrow(/permission denied/);
    await expect(d.inWorkspace("acme", (c) => c.query(`DELETE FROM ${t}`))).rejects.toThrow(/permission denied/);
    await expect(s.admin(`UPDATE ${t} SET event_type = 'forged'`)).rejects.toThrow(/append-only \(PULSE §7\.3\): UPDATE refused/);
    await expect(s.admin(`DELETE FROM ${t}`)).rejects.toThrow(/append-only \(PULSE §7\.3\): DELETE refused/);
    await expect(s.admin(`TRUNCATE ${t}`)).rejects.toThrow(/append-only \(PULSE §7\.3\): TRUNCATE refused/);
    expect((await d.inWorkspace("acme", (c) => c.query(`SELECT event_type FROM ${t}`))).rows).toEqual([{ event_type: "phase.completed" }]);
  });

  it("two hosts racing on the same phase signatures: each side effect runs once, and the output kept is byte for byte the winner's", async () => {
    fresh();
    await migrate(s.url);
    const hosts = [await db(s.url), await db(s.appUrl)];
    const effects = new Map<string, number>();
    const signatures = Array.from({ length: 100 }, (_, i) => `blake3:${i.toString(16).padStart(64, "0")}`);
    await Promise.all(
      hosts.flatMap((host, h) =>
        signatures.map((sig) =>
          host.inWorkspace("acme", async (c) => {
            if (await claimSignature(c, host.table("idempotency"), { ...claim("acme", sig), output: `{"host":${h},"b":1,"a":2}` })) effects.set(sig, (effects.get(sig) ?? 0) + 1);
          }),
        ),
      ),
    );
    expect(effects.size).toBe(100);
    expect([...effects.values()].every((n) => n === 1)).toBe(true);
    const kept = await hosts[0]!.inWorkspace("acme", (c) => c.query(`SELECT output FROM ${hosts[0]!.table("idempotency")}`));
    expect(kept.rows.every((r) => /^\{"host":[01],"b":1,"a":2\}$/.test(r.output))).toBe(true);
    // The near-miss: the same signature in another workspace is another claim.
    expect(await hosts[0]!.inWorkspace("globex", (c) => claimSignature(c, hosts[0]!.table("idempotency"), claim("globex", signatures[0]!)))).toBe(true);
  });

  it("an existing runtime role that could bypass row-level security is refused by migrate", async () => {
    fresh();
    await s.admin(`CREATE ROLE "${s.appRole}" LOGIN BYPASSRLS`);
    await expect(migrate(s.url)).rejects.toThrow(new RegExp(`role ${s.appRole} exists and can bypass row-level security \\(BYPASSRLS\\).*ALTER ROLE`));
    await s.admin(`ALTER ROLE "${s.appRole}" NOBYPASSRLS`);
    await expect(migrate(s.url)).resolves.toMatchObject({ to: SCHEMA_VERSION });
  });

  it("a server that does not answer, or an empty workspace, is one clear error", async () => {
    await expect(PostgresDatabase.open("postgres://postgres@127.0.0.1:1/test")).rejects.toThrow(/^cannot connect to PostgreSQL at postgres:\/\/postgres@127\.0\.0\.1:1\/test: .*ECONNREFUSED/);
    await expect(migrate("postgres://u:hunter2@127.0.0.1:1/test")).rejects.toThrow(/postgres:\/\/u:\*\*\*@127\.0\.0\.1:1/);
    fresh();
    await migrate(s.url);
    const d = await db(s.url);
    await expect(d.inWorkspace("", async () => 1)).rejects.toThrow(PostgresStoreError);
  });
});
