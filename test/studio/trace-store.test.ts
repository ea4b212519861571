/**
 * A trace the studio no longer holds in memory (here: one from before a restart) shows each
 * phase's output read back from the store's journal, for SQLite and PostgreSQL, through a real
 * `pulse studio` process; a trace id nobody knows stays a 404.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";
import { ROOT, runBin } from "../cli/run-bin.js";
import { describeWith, postgresService, runId } from "../helpers/services.js";
import { startStudio } from "./studio-process.js";

const HELLO = join(ROOT, "manifests/examples/hello.loop.yaml");
const pg = await postgresService();

async function roundTrip(store: string): Promise<void> {
  const cwd = mkdtempSync(join(tmpdir(), "pulse-studio-trace-"));
  let studio = await startStudio(cwd, ["--store", store, "--no-kickoff", HELLO]);
  let traceId: string;
  let outputs: unknown[];
  try {
    const r = (await (await fetch(`${studio.url}/api/loops/examples.hello/trigger`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" })).json()) as { trace_id: string };
    traceId = r.trace_id;
    await expect.poll(async () => ((await (await fetch(`${studio.url}/api/traces/${traceId}`)).json()) as { row?: { status?: string } }).row?.status, { timeout: 10_000 }).toBe("completed");
    const held = (await (await fetch(`${studio.url}/api/traces/${traceId}`)).json()) as any;
    expect(held.journal).toBeUndefined();
    outputs = held.row.phases.map((p: { output: string }) => JSON.parse(p.output));
  } finally {
    expect(await studio.stop()).toBe(0);
  }
  studio = await startStudio(cwd, ["--store", store, "--no-kickoff", HELLO]);
  try {
    const t = (await (await fetch(`${studio.url}/api/traces/${traceId}`)).json()) as any;
    expect(t.row).toBeNull();
    expect(t.journal.loop_id).toBe("examples.hello");
    expect(t.journal.phases.map((p: { phase_id: string }) => p.phase_id)).toEqual(["fetch", "decide", "apply", "learn"]);
    expect(t.journal.phases.map((p: { output: string }) => JSON.parse(p.output))).toEqual(outputs);
    expect(t.journal.phases[0].signature).toMatch(/^blake3:[0-9a-f]{64}$/);
    expect((await fetch(`${studio.url}/api/traces/${"0".repeat(32)}`)).status).toBe(404);
  } finally {
    expect(await studio.stop()).toBe(0);
  }
}

it("reads an earlier run's phase outputs from a SQLite store's journal", async () => {
  await roundTrip(join(mkdtempSync(join(tmpdir(), "pulse-studio-trace-db-")), "pulse.db"));
}, 60_000);

describeWith(pg, "the studio's trace view over PostgreSQL", (url) => {
  it("reads an earlier run's phase outputs from the journal", async () => {
    const store = `${url}?schema=${runId("studio_trace")}`;
    const migrated = runBin("pulse", ["store", "migrate", "--store", store]);
    expect(migrated.code, migrated.stderr).toBe(0);
    await roundTrip(store);
  }, 60_000);
});
