/** `pulse store migrate` and the usage errors of `pulse run --fleet`. */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { baseManifest } from "../helpers/manifests.js";
import { runBin } from "../cli/run-bin.js";
import { describeWith, natsService, postgresService } from "../helpers/services.js";
import { pgSchema, type PgSchema } from "../adapters/postgres/helpers.js";
import { natsSystem, type NatsSystem } from "../adapters/nats/helpers.js";
import { SESSION_SCHEMA_VERSION } from "../../adapters/postgres/session-schema.js";
import { WORKFLOW_SCHEMA_VERSION } from "../../adapters/postgres/workflow-schema.js";
import { RUN_SCHEMA_VERSION } from "../../adapters/postgres/run-schema.js";

it("pulse store migrate refuses what is not a PostgreSQL URL (exit 2) and names a server it cannot reach (exit 1)", () => {
  const sqlite = runBin("pulse", ["store", "migrate", "--store", "sqlite:.pulse/pulse.db"]);
  expect(sqlite.code).toBe(2);
  expect(sqlite.stderr).toMatch(/sets up a PostgreSQL store \(postgres:\/\/…\), not "sqlite:\.pulse\/pulse\.db"/);
  const down = runBin("pulse", ["store", "migrate", "--store", "postgres://postgres:secret@127.0.0.1:1/test"]);
  expect(down.code).toBe(1);
  expect(down.stderr).toBe("pulse store migrate: cannot connect to PostgreSQL at postgres://postgres:***@127.0.0.1:1/test: connect ECONNREFUSED 127.0.0.1:1\n");
});

it("pulse run --fleet needs --transport, and refuses --once", () => {
  const alone = runBin("pulse", ["run", "manifests/prism.benchmark.yaml", "--fleet", "postgres://postgres@127.0.0.1:1/test"]);
  expect(alone.code).toBe(2);
  expect(alone.stderr).toMatch(/--fleet needs --transport nats:\/\//);
  const once = runBin("pulse", ["run", "manifests/prism.benchmark.yaml", "--once", "--transport", "nats://127.0.0.1:1", "--fleet", "postgres://postgres@127.0.0.1:1/test"]);
  expect(once.code).toBe(2);
  expect(once.stderr).toMatch(/--once runs every loop once on this host/);
});

it("pulse run --store postgres://… (or PULSE_STORE) on a server it cannot reach: one positioned line naming where the store came from, exit 2", () => {
  const down = runBin("pulse", ["run", "manifests/prism.benchmark.yaml", "--once", "--store", "postgres://postgres:secret@127.0.0.1:1/test"]);
  expect(down.stderr).toBe("pulse: --store: cannot connect to PostgreSQL at postgres://postgres:***@127.0.0.1:1/test: connect ECONNREFUSED 127.0.0.1:1\n");
  expect(down.code).toBe(2);
  const fromEnv = runBin("pulse", ["run", "manifests/prism.benchmark.yaml", "--once"], { env: { PULSE_STORE: "postgres://postgres@127.0.0.1:1/test" } });
  expect(fromEnv.stderr).toBe("pulse: PULSE_STORE: cannot connect to PostgreSQL at postgres://postgres@127.0.0.1:1/test: connect ECONNREFUSED 127.0.0.1:1\n");
  expect(fromEnv.code).toBe(2);
});

it("pulse run names a manifest whose memory is a postgres:// URI (only the audit slot is served there): one line, exit 1", () => {
  const dir = mkdtempSync(join(tmpdir(), "pulse-pg-slot-"));
  try {
    const m = baseManifest();
    m.substrates = { ...m.substrates, memory: "postgres://postgres@127.0.0.1:1/test" };
    writeFileSync(join(dir, "loop.json"), JSON.stringify(m));
    const r = runBin("pulse", ["run", join(dir, "loop.json"), "--once"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`pulse run: ${join(dir, "loop.json")}: postgres://postgres@127.0.0.1:1/test: a postgres:// URI serves the audit slot only, not memory\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

describeWith(await postgresService(), "pulse store migrate on PostgreSQL", (url) => {
  let s: PgSchema | undefined;
  let nats: NatsSystem | undefined;
  afterEach(async () => {
    await s?.drop();
    await nats?.close();
  });

  it("creates the schema and roles, says so, and says nothing changed the second time", () => {
    s = pgSchema(url);
    const first = runBin("pulse", ["store", "migrate", "--store", s.url]);
    expect(first.stderr).toBe("");
    expect(first.code).toBe(0);
    expect(first.stdout).toBe(`schema ${s.schema} migrated from version 0 to 6; session tables created at version ${SESSION_SCHEMA_VERSION}; workflow tables created at version ${WORKFLOW_SCHEMA_VERSION}; agent run tables and run views created at version ${RUN_SCHEMA_VERSION}; created roles ${s.ownerRole}, ${s.appRole} (connected as postgres). Hosts work as ${s.appRole}.\n`);
    const again = runBin("pulse", ["store", "migrate", "--store", s.url]);
    expect(again.stdout).toBe(`schema ${s.schema} already at version 6; roles ${s.ownerRole}, ${s.appRole} already there (connected as postgres). Hosts work as ${s.appRole}.\n`);
  });

  it("pulse run --store on a reachable, migrated PostgreSQL store runs (the near miss of an unreachable one); on a schema never migrated it says what to run, exit 2", () => {
    s = pgSchema(url);
    const never = runBin("pulse", ["run", "manifests/prism.benchmark.yaml", "--once", "--store", s.url]);
    expect(never.code).toBe(2);
    expect(never.stderr).toMatch(/^pulse: --store: .*run pulse store migrate --store .*\n$/);
    expect(runBin("pulse", ["store", "migrate", "--store", s.url]).code).toBe(0);
    const ran = runBin("pulse", ["run", "manifests/prism.benchmark.yaml", "--once", "--store", s.url]);
    expect(ran.code).toBe(0);
    expect(ran.stdout).toMatch(/1 iteration; every loop ran once/);
  });

  it("pulse run --fleet on a schema never migrated says what to run, exit 2", async () => {
    const ns = await natsService();
    if (!ns.url) throw new Error(ns.missing);
    s = pgSchema(url);
    nats = natsSystem(ns.url);
    const r = runBin("pulse", ["run", "manifests/prism.benchmark.yaml", "--transport", nats.url, "--fleet", s.url, "--duration", "1s"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(new RegExp(`^pulse: --fleet: connected to .* as postgres, which cannot work as ${s.appRole} .*run pulse store migrate --store`));
  });
});
