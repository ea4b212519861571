/**
 * Hosts on one PostgreSQL store killed with SIGKILL at random moments, mid-commit included: two
 * processes commit iterations to one workspace (so they contend for its audit chain), are killed,
 * and restarted, several times. Afterwards every unit is whole (each committed phase has its two
 * audit events and its idempotency record; no audit event without its unit), the workspace's
 * chain verifies, and the hosts that came back continued it.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import fc from "fast-check";
import { beforeAll, expect, it } from "vitest";
import { migrate } from "../../../adapters/postgres/migrate.js";
import { PostgresStore } from "../../../adapters/postgres/store.js";
import { initSignatures } from "../../../src/runtime/signature.js";
import { ROOT } from "../../cli/run-bin.js";
import { describeWith, postgresService } from "../../helpers/services.js";
import { pgSchema } from "./helpers.js";

const CHILD = resolve(import.meta.dirname, "fixtures/committer.mjs");

beforeAll(async () => {
  if (!existsSync(join(ROOT, "dist/adapters/postgres/store.js"))) throw new Error("dist/ is missing: run `npm run build` first (npm test does)");
  await initSignatures();
});

/** Starts a host; kills it `killAfterMs` after it connected. Resolves with the iterations it reported. */
function host(url: string, loopId: string, killAfterMs: number): Promise<number> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [CHILD, url, loopId, "acme"], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (d: Buffer) => {
      if (out === "") setTimeout(() => child.kill("SIGKILL"), killAfterMs);
      out += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    child.on("exit", (code, signal) => (signal === "SIGKILL" ? done((out.match(/^iteration /gm) ?? []).length) : fail(new Error(`host exited with ${code}: ${err}`))));
  });
}

describeWith(await postgresService(), "PostgreSQL store: hosts killed with SIGKILL mid-commit", (url) => {
  it("leaves every unit whole and one audit chain that verifies, continued by the hosts that come back", { timeout: 120_000 }, async () => {
    const s = pgSchema(url);
    try {
      await migrate(s.url);
      let iterations = 0;
      await fc.assert(
        fc.asyncProperty(fc.tuple(fc.integer({ min: 0, max: 400 }), fc.integer({ min: 0, max: 400 })), async ([a, b]) => {
          const done = await Promise.all([host(s.appUrl, "loop.a", a), host(s.url, "loop.b", b)]);
          iterations += done[0] + done[1];
        }),
        { numRuns: 4 },
      );
      const t = (name: string) => `"${s.schema}".${name}`;
      const q = async (sql: string) => (await s.admin(sql)).rows;
      // Each committed phase has its two audit events and its idempotency record, and no audit event lacks its unit.
      expect(await q(`SELECT p.phase_id, p.signature FROM ${t("phases")} p WHERE (SELECT count(*) FROM ${t("audit_events")} e JOIN ${t("iterations")} i ON i.trace_id = e.trace_id WHERE i.id = p.iteration_id AND e.phase_id = p.phase_id) <> 2 OR NOT EXISTS (SELECT 1 FROM ${t("idempotency")} d WHERE d.signature = p.signature)`)).toEqual([]);
      expect(await q(`SELECT e.event_id FROM ${t("audit_events")} e WHERE e.phase_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM ${t("phases")} p JOIN ${t("iterations")} i ON i.id = p.iteration_id WHERE i.trace_id = e.trace_id AND p.phase_id = e.phase_id)`)).toEqual([]);
      // Every iteration a host reported finished is finished in the store, with its five phases.
      const finished = await q(`SELECT i.id, count(p.id)::int AS phases FROM ${t("iterations")} i LEFT JOIN ${t("phases")} p ON p.iteration_id = i.id WHERE i.status = 'completed' GROUP BY i.id`);
      expect(finished.length).toBeGreaterThanOrEqual(iterations);
      expect(finished.every((r) => r.phases === 5)).toBe(true);
      const store = await PostgresStore.open(s.appUrl);
      try {
        const [chain] = await store.verifyAudit("acme");
        expect(chain).toMatchObject({ workspace_id: "acme", ok: true });
        expect(chain!.events).toBeGreaterThan(14); // the hosts did work between kills
        expect(chain!.events).toBe(Number((await q(`SELECT count(*) AS n FROM ${t("audit_events")}`))[0].n));
        // A killed host's unfinished iteration is what a restart finds to resume.
        const interrupted = [...(await store.interrupted("loop.a")), ...(await store.interrupted("loop.b"))];
        for (const it of interrupted) expect(it.phases.length).toBeLessThan(5 + 1);
      } finally {
        await store.close();
      }
    } finally {
      await s.drop();
    }
  });
});
