/**
 * Resuming on a store a fleet shares (PostgreSQL): hosts in one process, each on its own
 * connection to one schema, as the hosts of a fleet are. The lease decides who resumes: a host
 * resumes an interrupted iteration when it gains the loop's lease (Host.takeOver, which the fleet
 * calls), never at start; a host that loses the lease stops its iteration before the next phase,
 * committing nothing more. Without a fleet, a host resumes at start (a memory store here).
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemoryStore } from "../../adapters/memory/store.js";
import { PostgresDatabase, PostgresLeases } from "../../adapters/postgres/index.js";
import { migrate } from "../../adapters/postgres/migrate.js";
import { PostgresStore } from "../../adapters/postgres/store.js";
import { createHost } from "../../src/embedded.js";
import type { FleetGate } from "../../src/fleet/contracts.js";
import type { Host, HostEvent } from "../../src/host/host.js";
import { initSignatures } from "../../src/runtime/signature.js";
import type { Store } from "../../src/store/contracts.js";
import { pgSchema, type PgSchema } from "../adapters/postgres/helpers.js";
import { baseManifest } from "../helpers/manifests.js";
import { describeWith, postgresService } from "../helpers/services.js";
import { event, TRACE } from "./stores.js";

const gate: FleetGate = { cadenceOrigin: 0, admit: async () => true, finished: async () => undefined };
const pgService = await postgresService();
beforeAll(() => initSignatures());

/** Side effects counted per trace and phase, whichever host ran them. */
class Effects {
  readonly runs = new Map<string, number>();
  /** What each iteration's fetch saw: the effect nodes in the memory graph. */
  readonly seen = new Map<string, number>();
  count(trace: string, phase: string): void {
    const k = `${trace} ${phase}`;
    this.runs.set(k, (this.runs.get(k) ?? 0) + 1);
  }
  of(trace: string, phase: string): number {
    return this.runs.get(`${trace} ${phase}`) ?? 0;
  }
}

/** A gate a test opens: a phase's handler waits on it when armed (the host is "mid-iteration"). */
class Gate {
  armed = false;
  private release: (() => void) | undefined;
  reached: Promise<void> = Promise.resolve();
  private reach: (() => void) | undefined;
  arm(): void {
    this.armed = true;
    this.reached = new Promise((r) => (this.reach = r));
  }
  async pass(): Promise<void> {
    if (!this.armed) return;
    this.armed = false;
    this.reach?.();
    await new Promise<void>((r) => (this.release = r));
  }
  open(): void {
    this.release?.();
  }
}

const PHASES = ["fetch", "decide", "apply", "learn"] as const;
type Phase = (typeof PHASES)[number];

interface TestHost {
  host: Host;
  notes: string[];
  gates: Record<Phase, Gate>;
}

/**
 * A host on `store` whose phases count their runs (at entry) and can be held at a gate; apply
 * stores one node, fetch reports how many it sees.
 */
async function hostOn(store: Store, effects: Effects, fleet?: FleetGate, workspace?: string): Promise<TestHost> {
  const host = await createHost({ store, ...(fleet ? { fleet } : {}), ...(workspace ? { workspace } : {}) });
  const notes: string[] = [];
  const gates = { fetch: new Gate(), decide: new Gate(), apply: new Gate(), learn: new Gate() };
  host.subscribe((e: HostEvent) => {
    if (e.type === "host.note") notes.push(e.message);
  });
  const loop = await host.load(baseManifest());
  const enter = async (phase: Phase, trace: string) => {
    effects.count(trace, phase);
    await gates[phase].pass();
  };
  loop.handle("fetch", async ({ substrates, trace_id }) => {
    await enter("fetch", trace_id);
    const seen = (await substrates.memory.retrieve_context({ query: { type: "effect" }, k: 100 })).nodes.length;
    effects.seen.set(trace_id, seen);
    return { seen };
  });
  loop.handle("decide", async ({ trace_id }) => (await enter("decide", trace_id), { decision: "go" }));
  loop.handle("apply", async ({ substrates, trace_id, signature }) => {
    await enter("apply", trace_id);
    const { node_id } = await substrates.memory.store_node({ node: { type: "effect", content: trace_id } });
    return { action_id: signature, node_id, causal_parent_ids: [] };
  });
  loop.handle("learn", async ({ trace_id }) => (await enter("learn", trace_id), { learned: true }));
  host.start();
  return { host, notes, gates };
}

/** Runs an iteration of `holder` that is held in `phase` while the holder loses the lease; resolves with its result. */
async function cutIn(holder: TestHost, phase: Phase) {
  holder.gates[phase].arm();
  const running = holder.host.trigger("test.loop");
  await holder.gates[phase].reached;
  holder.host.release("test.loop", "test: its lease ran out");
  holder.gates[phase].open();
  return running;
}

describeWith(pgService, "a fleet's takeover on a shared PostgreSQL store", () => {
  let pg: PgSchema;
  const stores: PostgresStore[] = [];
  const open = async () => {
    const s = await PostgresStore.open(pg.url);
    stores.push(s);
    return s;
  };
  beforeAll(async () => {
    pg = pgSchema(pgService.url as string);
    await migrate(pg.url);
  });
  afterAll(async () => {
    for (const s of stores) await s.close().catch(() => undefined);
    await pg?.drop();
  });

  it("the lease's new holder resumes the old holder's iteration at the phase after its last committed one; the old holder stops before it; numbering and memory continue", async () => {
    const effects = new Effects();
    const a = await hostOn(await open(), effects, gate);
    const b = await hostOn(await open(), effects, gate);
    // b held the loop first: two iterations (its graph and counters now loaded), then a took over.
    await (await b.host.takeOver("test.loop")).finished;
    for (let i = 0; i < 2; i++) expect((await b.host.trigger("test.loop")).status).toBe("completed");
    b.host.release("test.loop", "test: a takes over");
    await (await a.host.takeOver("test.loop")).finished;
    expect((await a.host.trigger("test.loop")).iteration).toBe(3);
    // a's 4th iteration is held in learn (apply committed, learn not) while a loses the lease.
    const cut = await cutIn(a, "learn");
    expect(cut.error?.code).toBe("LEASE_LOST");
    expect(effects.of(cut.trace_id, "learn")).toBe(1);
    const [left] = await stores[0]!.interrupted("test.loop");
    expect(left?.trace_id).toBe(cut.trace_id);
    expect(left?.phases.map((p) => p.phase_id)).toEqual(["fetch", "decide", "apply"]);

    // b gains the lease again: it reads the journal afresh and resumes a's iteration at learn.
    const taken = await b.host.takeOver("test.loop");
    const resumed = (await taken.finished) as { status: string; trace_id: string; iteration: number; phases: { phase_id: string }[] };
    expect(b.notes).toContain("resumed test.loop #4 at learn: taken over from the journal");
    expect(resumed).toMatchObject({ status: "completed", trace_id: cut.trace_id, iteration: 4 });
    expect(resumed.phases.map((p) => p.phase_id)).toEqual(["learn"]);
    for (const phase of ["fetch", "decide", "apply"]) expect(effects.of(cut.trace_id, phase)).toBe(1);
    expect(effects.of(cut.trace_id, "learn")).toBe(2);
    expect(await stores[1]!.interrupted("test.loop")).toEqual([]);

    // The next iteration is #5 (not b's stale 3), and its fetch sees a's nodes too (not b's stale 2).
    const next = await b.host.trigger("test.loop");
    expect(next.iteration).toBe(5);
    expect(effects.seen.get(next.trace_id)).toBe(4);
    const nodes = await stores[1]!.memory("memory://m").retrieve_context({ query: { type: "effect" }, k: 100 }, { trace_id: TRACE, workspace_id: "default" });
    expect(nodes.nodes).toHaveLength(5);

    // The resumed trail: iteration.resumed, one gap-free sequence, one completion; the chain verifies.
    const trail = (await stores[1]!.queryAudit({ trace_id: cut.trace_id, limit: 100 })).events.map((e) => e.event);
    expect(trail.map((e) => e.seq)).toEqual(trail.map((_, i) => i));
    expect(trail.filter((e) => e.event_type === "iteration.resumed")).toHaveLength(1);
    expect(trail.filter((e) => e.event_type === "iteration.completed")).toHaveLength(1);
    expect(trail.filter((e) => e.event_type === "phase.completed" && e.phase_id === "apply")).toHaveLength(1);
    expect((await stores[1]!.verifyAudit()).every((r) => r.ok)).toBe(true);
    await a.host.stop({ timeoutMs: 2000 });
    await b.host.stop({ timeoutMs: 2000 });
  });

  it("near miss: a host joining the fleet while another runs an iteration does not resume it, and that iteration completes once", async () => {
    const effects = new Effects();
    const runner = await hostOn(await open(), effects, gate);
    await (await runner.host.takeOver("test.loop")).finished;
    runner.gates.learn.arm();
    const running = runner.host.trigger("test.loop");
    await runner.gates.learn.reached;
    const live = await stores.at(-1)!.interrupted("test.loop");
    expect(live).toHaveLength(1);
    // Joins now, sees the running iteration in the journal at load, holds no lease: leaves it.
    const joiner = await hostOn(await open(), effects, gate);
    await new Promise((r) => setTimeout(r, 300));
    expect(joiner.notes.filter((n) => n.startsWith("resumed"))).toEqual([]);
    runner.gates.learn.open();
    const done = await running;
    expect(done.status).toBe("completed");
    for (const phase of ["fetch", "decide", "apply", "learn"]) expect(effects.of(done.trace_id, phase)).toBe(1);
    expect(await stores.at(-1)!.interrupted("test.loop")).toEqual([]);
    await joiner.host.stop({ timeoutMs: 2000 });
    await runner.host.stop({ timeoutMs: 2000 });
  });

  it("property: wherever in an iteration the lease is lost, the new holder resumes at that phase, and each committed phase ran once", async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 2 }), fc.constantFrom(...PHASES), async (before, phase) => {
        const workspace = `prop-${++run}`;
        const effects = new Effects();
        const a = await hostOn(await open(), effects, gate, workspace);
        const b = await hostOn(await open(), effects, gate, workspace);
        try {
          await (await a.host.takeOver("test.loop")).finished;
          for (let i = 0; i < before; i++) expect((await a.host.trigger("test.loop")).status).toBe("completed");
          const cut = await cutIn(a, phase);
          expect(cut.error?.code).toBe("LEASE_LOST");
          const resumed = (await (await b.host.takeOver("test.loop")).finished) as { status: string; trace_id: string; iteration: number; phases: { phase_id: string }[] } | undefined;
          const at = PHASES.indexOf(phase);
          if (at === 0) {
            // Nothing of it had committed: the journal never saw it, and nothing is resumed.
            expect(resumed).toBeUndefined();
          } else {
            expect(resumed).toMatchObject({ status: "completed", trace_id: cut.trace_id, iteration: before + 1 });
            expect(resumed!.phases.map((p) => p.phase_id)).toEqual(PHASES.slice(at));
          }
          // Committed phases ran once; the one cut off twice (once here when it never committed).
          expect(PHASES.map((p) => effects.of(cut.trace_id, p))).toEqual(PHASES.map((_, i) => (i < at ? 1 : i === at ? (at === 0 ? 1 : 2) : at === 0 ? 0 : 1)));
          const next = await b.host.trigger("test.loop");
          expect(next.iteration).toBe(at === 0 ? before + 1 : before + 2);
          expect(effects.seen.get(next.trace_id)).toBe(at === 0 ? before : before + 1);
          expect(await stores.at(-1)!.interrupted("test.loop")).toEqual([]);
          expect((await stores.at(-1)!.verifyAudit(workspace)).every((r) => r.ok)).toBe(true);
        } finally {
          await a.host.stop({ timeoutMs: 2000 });
          await b.host.stop({ timeoutMs: 2000 });
        }
      }),
      { numRuns: 8 },
    );
  }, 120_000);

  it.each([
    ["apply", "the phase's commit"],
    ["learn", "the iteration's end"],
  ] as const)("the database fences a commit sent under a lease that changed hands meanwhile (the host had not noticed), cut in %s: the iteration ends LEASE_LOST, the new holder resumes that phase; the holder's earlier commits passed", async (phase, what) => {
    const workspace = `fenced-${phase}`;
    const key = { loop_id: "test.loop", workspace_id: workspace };
    const db = await PostgresDatabase.open(pg.url);
    try {
      const lease = await new PostgresLeases(db).acquire(key, "a", 60_000);
      expect(lease?.epoch).toBe(1);
      const fenced = async (holder: string, epoch: number) => {
        const store = await open();
        expect(store.fenceWith(pg.url, (loopId, ws) => (loopId === "test.loop" && ws === workspace ? { holder, epoch } : undefined))).toBe(true);
        return store;
      };
      const effects = new Effects();
      const a = await hostOn(await fenced("a", 1), effects, gate, workspace);
      const b = await hostOn(await fenced("b", 2), effects, gate, workspace);
      try {
        await (await a.host.takeOver("test.loop")).finished;
        a.gates[phase].arm();
        const running = a.host.trigger("test.loop");
        await a.gates[phase].reached;
        // b takes the lease over; a's host has not renewed yet and still believes it holds it.
        await pg.admin(`UPDATE "${pg.schema}".leases SET holder = 'b', epoch = 2 WHERE loop_id = $1 AND workspace_id = $2`, ["test.loop", workspace]);
        a.gates[phase].open();
        const cut = await running;
        expect(cut.error?.code).toBe("LEASE_LOST");
        expect(cut.error?.message).toContain(`the database refused ${what}`);
        // The phases before it committed under a's lease (the near miss); its commit was refused, whole.
        const at = PHASES.indexOf(phase);
        const left = await stores.at(-1)!.interrupted("test.loop");
        expect(left.map((i) => [i.trace_id, i.phases.map((p) => p.phase_id)])).toEqual([[cut.trace_id, PHASES.slice(0, at)]]);
        const resumed = (await (await b.host.takeOver("test.loop")).finished) as { status: string; trace_id: string; phases: { phase_id: string }[] };
        expect(resumed).toMatchObject({ status: "completed", trace_id: cut.trace_id });
        expect(resumed.phases.map((p) => p.phase_id)).toEqual(PHASES.slice(at));
        expect(PHASES.map((p) => effects.of(cut.trace_id, p))).toEqual(PHASES.map((_, i) => (i === at ? 2 : 1)));
        expect((await stores.at(-1)!.verifyAudit(workspace)).every((r) => r.ok)).toBe(true);
      } finally {
        await a.host.stop({ timeoutMs: 2000 });
        await b.host.stop({ timeoutMs: 2000 });
      }
    } finally {
      await db.close();
    }
  });
});

describe("resume without a fleet", () => {
  it("a host alone on its store resumes the interrupted iteration at start, at the phase after the last committed one", async () => {
    const store = new MemoryStore();
    const at = { loop_id: "test.loop", workspace_id: "default", trace_id: TRACE };
    await store.commit({ ...at, started: { number: 3, entry: "fetch", input: null, started_at: "2026-11-24T12:00:00.000Z" }, counters: { iterations: 3, started: true }, audit: [event(0, { ...at, event_type: "iteration.started", phase_id: null, data: { iteration: 3 } })] });
    await store.commit({ ...at, phase: { phase_id: "fetch", signature: "blake3:f", status: "completed", output: { query: null }, next: "decide" }, audit: [event(1, { ...at, phase_id: "fetch" })] });
    const effects = new Effects();
    const { host, notes } = await hostOn(store, effects);
    await host.settled();
    await host.stop({ timeoutMs: 2000 });
    expect(notes).toContain("resumed test.loop #3 at decide");
    expect(effects.of(TRACE, "fetch")).toBe(0);
    expect(effects.of(TRACE, "decide")).toBe(1);
    expect(await store.interrupted("test.loop")).toEqual([]);
  });
});
