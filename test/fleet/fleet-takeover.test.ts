/**
 * A fleet's takeover resumes, from the shared PostgreSQL journal, the iteration its dead host
 * left half done, tested the way it happens: three real host processes (fixtures/takeover-host.mjs,
 * what `pulse run --store postgres://… --fleet … --transport nats://…` assembles, with counting
 * handlers) on one PostgreSQL schema and one NATS system, a periodic loop shared between them.
 *
 *   1. h1 runs alone and blocks for good in learn of iteration #4: fetch, decide and apply (the act,
 *      whose side effect is a memory node and a count) committed, learn not.
 *   2. Near miss: h2 and h3 join while h1 is alive in that iteration; for twice the lease time
 *      neither resumes it (nor runs the loop at all).
 *   3. h1 is SIGKILLed. The survivor that gains the lease resumes #4 at learn (same trace,
 *      `iteration.resumed`), within the lease time, before any new tick.
 *   4. Three more iterations; the holder is stopped gracefully; the last host takes over at once
 *      and runs three more.
 *
 * Then: iterations are numbered 1..N, each completed exactly once; every act's side effect is
 * there exactly once (one memory node and one count per iteration; only #4's learn ran twice, as
 * it never committed on h1); each fetch saw every earlier iteration's node, whichever host wrote
 * it; every claimed tick finished; nothing is left interrupted; the audit chain verifies.
 */
import { resolve } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { PostgresStore } from "../../adapters/postgres/store.js";
import { initSignatures } from "../../src/runtime/signature.js";
import { describeWith } from "../helpers/services.js";
import { until } from "../transports/contract.js";
import { both, startHost, takeoverWorld, type HostProcess } from "./processes.js";

const HOST = resolve(import.meta.dirname, "fixtures/takeover-host.mjs");
const TTL_MS = 2_000;
const BLOCK_AT = 4;

beforeAll(() => initSignatures());
describeWith(both, "a fleet's takeover of a half-done iteration", () => {
  const cleanup: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const c of cleanup.reverse()) await c().catch(() => undefined);
  });

  it("the survivor resumes the killed host's iteration at the phase after its last committed one; nothing committed runs twice or is lost; a joining host leaves a live host's iteration alone", async () => {
    // The world the handlers act on: every phase run, counted by trace, whichever host ran it.
    const { runs, pg, env } = await takeoverWorld(cleanup, 400, TTL_MS);
    const start = (name: string, blockAt?: number): HostProcess => startHost(name, [HOST], { ...env(name), ...(blockAt ? { BLOCK_AT: String(blockAt) } : {}) }, cleanup);
    const notes = (h: HostProcess, prefix: string) => h.records.filter((r) => r.type === "note" && String(r.message).startsWith(prefix));
    const holds = (h: HostProcess) => notes(h, "fleet: fleet.worker runs here").length > notes(h, "fleet: fleet.worker no longer runs here").length;
    const started = (h: HostProcess) => h.records.filter((r) => r.type === "iteration.started");

    // 1. h1 alone, until it blocks in learn of #4.
    const h1 = start("h1", BLOCK_AT);
    await until("h1 to block in learn of #4", () => h1.records.some((r) => r.type === "blocked"), 60_000);
    const cut = h1.records.find((r) => r.type === "blocked") as { trace_id: string; iteration: number };
    expect(cut.iteration).toBe(BLOCK_AT);
    expect(runs.filter((r) => r.trace === cut.trace_id).map((r) => r.phase)).toEqual(["fetch", "decide", "apply", "learn"]);

    // 2. The near miss: two hosts join while h1 is alive mid-iteration. They leave it alone.
    const h2 = start("h2");
    const h3 = start("h3");
    await until("h2 and h3 to join", () => h2.records.some((r) => r.type === "ready") && h3.records.some((r) => r.type === "ready"), 30_000);
    await new Promise((r) => setTimeout(r, 2 * TTL_MS));
    for (const h of [h2, h3]) {
      expect(notes(h, "resumed")).toEqual([]);
      expect(started(h)).toEqual([]);
      expect(holds(h)).toBe(false);
    }
    expect(runs.filter((r) => r.trace === cut.trace_id)).toHaveLength(4);

    // 3. SIGKILL h1 mid-iteration: a survivor gains the lease and resumes #4 at learn.
    h1.child.kill("SIGKILL");
    const killedAt = Date.now();
    await h1.exited;
    await until("a survivor to resume #4", () => [h2, h3].some((h) => notes(h, "resumed fleet.worker #4 at learn").length > 0), 30_000);
    const second = [h2, h3].find((h) => notes(h, "resumed fleet.worker #4 at learn").length > 0) as HostProcess;
    const third = second === h2 ? h3 : h2;
    const resumedAt = notes(second, "resumed fleet.worker #4 at learn")[0]!.seen_at as number;
    // Within the lease time, plus one renewal round and a process's reaction time.
    expect(resumedAt - killedAt).toBeLessThan(TTL_MS + TTL_MS / 3 + 1_500);
    expect(notes(third, "resumed")).toEqual([]);
    // The resumption is the first iteration the survivor starts: same trace, at learn, before any new tick.
    await until("the resumed iteration to start", () => started(second).length > 0, 10_000);
    expect(started(second)[0]).toMatchObject({ trace_id: cut.trace_id, iteration: BLOCK_AT, entry: "learn" });

    // 4. Three more on the survivor, a graceful stop, three more on the last host.
    const completed = (h: HostProcess) => h.records.filter((r) => r.type === "iteration.finished" && r.status === "completed").length;
    await until("three more iterations on the survivor", () => completed(second) >= 4, 30_000);
    second.child.kill("SIGINT");
    const stoppedAt = Date.now();
    expect(await second.exited).toBe(0);
    await until("the last host to take over", () => holds(third), 30_000);
    const handoverMs = (notes(third, "fleet: fleet.worker runs here").at(-1)!.seen_at as number) - stoppedAt;
    expect(handoverMs).toBeLessThan(TTL_MS);
    await until("three more iterations on the last host", () => completed(third) >= 3, 30_000);
    third.child.kill("SIGINT");
    expect(await third.exited).toBe(0);

    // The journal: iterations 1..N, each completed once; nothing interrupted; every tick finished.
    const iterations = (await pg.admin(`SELECT number, trace_id, status FROM "${pg.schema}".iterations WHERE loop_id = 'fleet.worker' ORDER BY number`)).rows as { number: number; trace_id: string; status: string }[];
    const n = iterations.length;
    expect(n).toBeGreaterThanOrEqual(BLOCK_AT + 6);
    expect(iterations.map((i) => i.number)).toEqual(Array.from({ length: n }, (_, i) => i + 1));
    expect(iterations.every((i) => i.status === "completed")).toBe(true);
    expect(iterations[BLOCK_AT - 1]!.trace_id).toBe(cut.trace_id);
    const ticks = (await pg.admin(`SELECT finished_at IS NOT NULL AS finished FROM "${pg.schema}".ticks WHERE loop_id = 'fleet.worker'`)).rows as { finished: boolean }[];
    expect(ticks.length).toBe(n);
    expect(ticks.every((t) => t.finished)).toBe(true);

    // Each committed phase ran once; #4's learn twice (it had not committed on h1).
    for (const it of iterations) {
      const phases = runs.filter((r) => r.trace === it.trace_id).map((r) => r.phase);
      expect([it.number, phases]).toEqual([it.number, it.trace_id === cut.trace_id ? ["fetch", "decide", "apply", "learn", "learn"] : ["fetch", "decide", "apply", "learn"]]);
    }
    // Each act's side effect exactly once, and every fetch saw the nodes of all earlier iterations.
    const nodes = (await pg.admin(`SELECT value FROM "${pg.schema}".memory_state WHERE kind = 'node'`)).rows.map((r) => JSON.parse(r.value as string).node?.content ?? JSON.parse(r.value as string).content);
    expect(nodes.sort()).toEqual(iterations.map((i) => i.trace_id).sort());
    const seen = (await pg.admin(`SELECT i.number, p.output FROM "${pg.schema}".phases p JOIN "${pg.schema}".iterations i ON i.id = p.iteration_id WHERE p.phase_id = 'fetch' ORDER BY i.number`)).rows.map((r) => [Number(r.number), JSON.parse(r.output as string).seen]);
    expect(seen).toEqual(iterations.map((i) => [i.number, i.number - 1]));

    // The trail: #4 resumed once, completed once, one gap-free sequence; the chain verifies.
    const store = await PostgresStore.open(pg.url);
    try {
      expect(await store.interrupted("fleet.worker")).toEqual([]);
      const trail = (await store.queryAudit({ trace_id: cut.trace_id, limit: 100 })).events.map((e) => e.event);
      expect(trail.map((e) => e.seq)).toEqual(trail.map((_, i) => i));
      expect(trail.filter((e) => e.event_type === "iteration.resumed")).toHaveLength(1);
      expect(trail.filter((e) => e.event_type === "iteration.completed")).toHaveLength(1);
      expect(trail.filter((e) => e.event_type === "phase.completed" && e.phase_id === "apply")).toHaveLength(1);
      const reports = await store.verifyAudit();
      expect(reports.length).toBeGreaterThan(0);
      expect(reports.every((r) => r.ok)).toBe(true);
    } finally {
      await store.close();
    }
  }, 240_000);
});
