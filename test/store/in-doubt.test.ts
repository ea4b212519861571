/**
 * An iteration whose end was on the wire when PostgreSQL's connection broke ends as failed, "the
 * unit is all committed or not at all, which one is known once the server answers again". Once
 * the server answers the host finds out and says which it was, once, and corrects the loop's
 * counts: "committed after all", or "not committed: resumed" (and the iteration then runs to its
 * end from its last committed phase). A TCP relay between the host and the server breaks the
 * connection exactly there: after the server answered the commit (it committed), or before the
 * server saw it (it did not); and refuses connections for a moment after, as a server restarting.
 */
import { afterEach, beforeAll, expect, it } from "vitest";
import { migrate } from "../../adapters/postgres/migrate.js";
import { PostgresStore } from "../../adapters/postgres/store.js";
import { createHost } from "../../src/embedded.js";
import { recordingHandler } from "../../src/host/index.js";
import type { HostEvent } from "../../src/host/host.js";
import { initSignatures } from "../../src/runtime/signature.js";
import { pgSchema, type PgSchema } from "../adapters/postgres/helpers.js";
import { baseManifest } from "../helpers/manifests.js";
import { describeWith, postgresService } from "../helpers/services.js";
import { Relay } from "./pg-relay.js";

beforeAll(() => initSignatures());

describeWith(await postgresService(), "an iteration's end in doubt when PostgreSQL went away", (url) => {
  let s: PgSchema;
  const open: { close(): Promise<unknown> }[] = [];
  afterEach(async () => {
    for (const o of open.splice(0).reverse()) await o.close();
    await s?.drop();
  });

  const setUp = async () => {
    s = pgSchema(url);
    await migrate(s.url);
    const relay = new Relay(new URL(url));
    await relay.listen();
    open.push(relay);
    const via = new URL(s.appUrl);
    via.host = `127.0.0.1:${relay.port}`;
    const store = await PostgresStore.open(via.toString());
    open.push(store);
    const host = await createHost({ store, defaultHandler: recordingHandler({ emits: () => [] }) });
    const events: HostEvent[] = [];
    host.subscribe((e) => events.push(e));
    const loop = await host.load(baseManifest());
    let learned = 0;
    // The last phase arms the relay: the unit that carries it carries the iteration's end too.
    let cut: "after" | "before" | undefined;
    loop.handle("learn", async () => {
      learned++;
      relay.cut = cut;
      cut = undefined;
      return { learned: true };
    });
    host.start();
    open.push({ close: () => host.stop({ timeoutMs: 2000 }) });
    const resolved = () => new Promise<Extract<HostEvent, { type: "iteration.resolved" }>>((r) => host.subscribe((e) => e.type === "iteration.resolved" && r(e)));
    return { host, loop, events, store, armNext: (when: "after" | "before") => (cut = when), learnedCount: () => learned, resolved };
  };
  const statusOf = async (trace: string) => (await s.admin(`SELECT status FROM "${s.schema}".iterations WHERE trace_id = $1`, [trace])).rows.map((r: { status: string }) => r.status);

  it("its end committed before the connection broke: reported failed (in doubt), then 'committed after all', counted completed", async () => {
    const { host, loop, armNext, resolved } = await setUp();
    armNext("after");
    const said = resolved();
    const r = await host.trigger(loop.id);
    expect(r.status).toBe("failed");
    expect(r.error?.code).toBe("STORE_UNAVAILABLE");
    expect(r.error?.message).toMatch(/the unit is all committed or not at all, which one is known once the server answers again$/);
    expect(loop.telemetry().iteration_statuses).toEqual({ failed: 1 });
    const e = await said;
    expect(e).toMatchObject({ loop_id: loop.id, trace_id: r.trace_id, iteration: 1, outcome: "committed", status: "completed" });
    expect(e.message).toMatch(/^committed after all: /);
    expect(loop.telemetry()).toMatchObject({ iteration_count: 1, iteration_statuses: { completed: 1 } });
    expect(await statusOf(r.trace_id)).toEqual(["completed"]);
    // The next iteration is #2: the counters say so too.
    expect((await host.trigger(loop.id)).iteration).toBe(2);
  });

  it("its end never reached the server: reported failed (in doubt), then 'not committed: resumed', and the iteration runs its last phase again to its end, counted once", async () => {
    const { host, loop, events, armNext, resolved, learnedCount } = await setUp();
    armNext("before");
    const said = resolved();
    const r = await host.trigger(loop.id);
    expect(r.status).toBe("failed");
    expect(r.error?.message).toMatch(/which one is known once the server answers again$/);
    const e = await said;
    expect(e).toMatchObject({ trace_id: r.trace_id, iteration: 1, outcome: "resumed", message: "not committed: resumed from the journal" });
    await host.settled();
    await expect.poll(() => statusOf(r.trace_id), { timeout: 5000 }).toEqual(["completed"]);
    await host.settled();
    const finished = events.filter((x): x is Extract<HostEvent, { type: "iteration.finished" }> => x.type === "iteration.finished" && x.trace_id === r.trace_id);
    expect(finished.map((x) => [x.iteration, x.status])).toEqual([
      [1, "failed"],
      [1, "completed"],
    ]);
    expect(events.some((x) => x.type === "host.note" && x.message === `resumed ${loop.id} #1 at learn: its end was not committed`)).toBe(true);
    expect(learnedCount()).toBe(2);
    expect(loop.telemetry()).toMatchObject({ iteration_count: 1, iteration_statuses: { completed: 1 } });
    expect((await host.trigger(loop.id)).iteration).toBe(2);
  });
});
