/**
 * Two loops sharing one memory graph (`memory://shared/graph`) whose leases are on different
 * hosts: two real `pulse run --store postgres://… --fleet … --transport nats://…` processes, each
 * given one of the loops, on the suite's PostgreSQL. Both write nodes into the graph every tick.
 *
 * Checked from the database afterwards: every store_node the audit trail says was committed
 * (a `substrate.mutated` event naming the node and its mutation record) is in the graph, with
 * the mutation record that describes that write, whichever host made it. (That reads see the
 * other host's commits is checked in test/adapters/postgres/shared-memory.test.ts.)
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, expect, it } from "vitest";
import { migrate } from "../../adapters/postgres/index.js";
import { pgSchema } from "../adapters/postgres/helpers.js";
import { natsSystem } from "../adapters/nats/helpers.js";
import { isolatedStore, ROOT } from "../cli/run-bin.js";
import { baseManifest } from "../helpers/manifests.js";
import { describeWith } from "../helpers/services.js";
import { until } from "../transports/contract.js";
import { both, natsServiceState, pgService, startHost } from "./processes.js";

const PULSE = resolve(ROOT, "dist/bin/pulse.mjs");

describeWith(both, "loops sharing a memory graph on two hosts", () => {
  const cleanup: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const c of cleanup.reverse()) await c().catch(() => undefined);
  });

  it("every committed store_node of either host is in the graph afterwards, with its own mutation record", async () => {
    const pg = pgSchema(pgService.url as string);
    cleanup.push(() => pg.drop());
    await migrate(pg.url);
    const nats = natsSystem(natsServiceState.url as string);
    cleanup.push(() => nats.close());
    const hosts = ["a", "b"].map((name) => {
      const dir = mkdtempSync(join(tmpdir(), `pulse-shared-${name}-`));
      cleanup.push(async () => rmSync(dir, { recursive: true, force: true }));
      const m = baseManifest();
      m.loop_id = `shared.${name}`;
      m.cadence = { type: "periodic", params: { interval: "150ms" } };
      m.substrates = { memory: "memory://shared/graph", policy: "memory://p", audit: "memory://a", auth: "memory://u" };
      writeFileSync(join(dir, `${name}.json`), JSON.stringify(m));
      const args = [PULSE, "run", dir, "--json", "--duration", "60s", "--store", pg.url, "--fleet", pg.url, "--transport", nats.url, "--lease-ttl", "3s", "--host-id", `host-${name}`];
      return startHost(`host-${name}`, args, { ...process.env, ...isolatedStore() }, cleanup);
    });
    const completed = (h: (typeof hosts)[number]) => h.records.filter((r) => r.type === "iteration.finished" && r.status === "completed").length;
    await until("12 completed iterations on each host", () => hosts.every((h) => completed(h) >= 12), 60_000).catch((e) => { for (const h of hosts) console.log(`${h.name}: ${JSON.stringify(h.records.filter((r) => r.type !== "phase.started" && r.type !== "phase.completed").slice(0, 12))}`); throw e; });
    for (const h of hosts) h.child.kill("SIGINT");
    for (const h of hosts) expect(await h.exited).toBe(0);

    const q = async (sql: string) => (await pg.admin(sql.replaceAll("T.", `"${pg.schema}".`))).rows as Record<string, any>[];
    const stored = (await q(`SELECT loop_id, data FROM T.audit_events WHERE event_type = 'substrate.mutated' ORDER BY position`))
      .map((r) => ({ loop: r.loop_id as string, ...(JSON.parse(r.data) as { operation: string; result: { node_id: string; audit_event_id: string } }) }))
      .filter((e) => e.operation === "store_node");
    // Both hosts committed writes: the graph is really shared.
    expect(new Set(stored.map((s) => s.loop))).toEqual(new Set(["shared.a", "shared.b"]));
    expect(stored.length).toBeGreaterThanOrEqual(24);
    const nodes = new Map((await q(`SELECT key, value FROM T.memory_state WHERE kind = 'node'`)).map((r) => [r.key as string, JSON.parse(r.value)]));
    const mutations = new Map((await q(`SELECT key, value FROM T.memory_state WHERE kind = 'mutation'`)).map((r) => [r.key as string, JSON.parse(r.value)]));
    // Every committed write is there, node and mutation record naming each other, no id given twice.
    expect(new Set(stored.map((s) => s.result.node_id)).size).toBe(stored.length);
    expect(stored.filter((s) => !nodes.has(s.result.node_id)).map((s) => s.result.node_id)).toEqual([]);
    expect(stored.filter((s) => nodes.get(s.result.node_id)?.audit_event_id !== s.result.audit_event_id)).toEqual([]);
    expect(stored.filter((s) => mutations.get(s.result.audit_event_id)?.ids?.[0] !== s.result.node_id)).toEqual([]);
    expect(stored.filter((s) => nodes.get(s.result.node_id)?.node?.content?.loop !== s.loop)).toEqual([]);
  }, 160_000);
});
