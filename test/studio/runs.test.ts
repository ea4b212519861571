/**
 * The studio's coding runs and live feed over HTTP against a real `pulse studio`: a session whose
 * runner process is gone is shown interrupted (one whose runner lives, running), and a page that
 * reconnects with Last-Event-ID gets the events it missed.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SqliteSessionRecords } from "../../adapters/sqlite/session-records.js";
import { ROOT } from "../cli/run-bin.js";
import { startStudio, type Studio } from "./studio-process.js";

const HELLO = join(ROOT, "manifests/examples/hello.loop.yaml");
const json = { "content-type": "application/json" };

/** A pid no process has: one that just exited. */
function deadPid(): number {
  const r = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" });
  return Number(r.stdout);
}

/** Reads the feed until `enough` says so (or 10 s), then disconnects. */
async function readFeed(url: string, headers: Record<string, string>, enough: (events: { id: number; type: string; data: any }[]) => boolean): Promise<{ id: number; type: string; data: any }[]> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), 10_000);
  const res = await fetch(url, { headers, signal: abort.signal });
  const events: { id: number; type: string; data: any }[] = [];
  let buf = "";
  try {
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      buf += Buffer.from(chunk).toString("utf8");
      let end;
      while ((end = buf.indexOf("\n\n")) >= 0) {
        const block = buf.slice(0, end);
        buf = buf.slice(end + 2);
        const f = Object.fromEntries(block.split("\n").filter((l) => !l.startsWith(":") && l.includes(": ")).map((l) => [l.slice(0, l.indexOf(": ")), l.slice(l.indexOf(": ") + 2)]));
        if (f.id !== undefined) events.push({ id: Number(f.id), type: f.event!, data: JSON.parse(f.data!) });
      }
      if (enough(events)) break;
    }
  } catch {
    // aborted at the deadline
  } finally {
    clearTimeout(timer);
    abort.abort();
  }
  return events;
}

describe("pulse studio's coding runs and feed", () => {
  let studio: Studio;
  let dir: string;
  let orphan: string;
  let live: string;
  let away: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "pulse-studio-runs-"));
    const store = join(dir, "pulse.db");
    const records = SqliteSessionRecords.open(store);
    const make = async (id: string, pid: number) => {
      await records.create({ id, project_name: "app", goal: `goal of ${id.slice(0, 4)}`, max_iterations: 5, repo_path: dir, driver: { name: "scripted" }, context_strategy: "none", created_by: "cli" });
      await records.update(id, { status: "running", runner_pid: pid, current_iteration: 1 });
    };
    orphan = "aaaaaaaa-0000-4000-8000-000000000001";
    live = "bbbbbbbb-0000-4000-8000-000000000002";
    await make(orphan, deadPid());
    await make(live, process.pid);
    // Paused, its worktree removed (as a blocked session's is until it resumes).
    away = "cccccccc-0000-4000-8000-000000000003";
    await make(away, deadPid());
    await records.update(away, { status: "paused", runner_pid: null, worktree_path: join(dir, "removed-worktree") });
    await records.close();
    studio = await startStudio(dir, ["--store", store, "--no-kickoff", HELLO]);
  });
  afterAll(async () => expect(await studio.stop()).toBe(0));

  it("shows a running session whose runner is gone as interrupted, and one whose runner lives as running", async () => {
    const { runs } = (await (await fetch(`${studio.url}/api/runs`)).json()) as { runs: { id: string; status: string; kind: string; status_reason: string | null }[] };
    expect(runs.find((r) => r.id === orphan)).toMatchObject({ kind: "session", status: "interrupted" });
    expect(runs.find((r) => r.id === orphan)!.status_reason).toContain("stopped while it ran");
    expect(runs.find((r) => r.id === live)).toMatchObject({ status: "running" });
    // Pausing the interrupted one acts at once (nothing runs it); the live one's pause waits for its runner.
    const paused = (await (await fetch(`${studio.url}/api/runs/session/${orphan}/pause`, { method: "POST", headers: json, body: "{}" })).json()) as { run: { status: string; control: string | null } };
    expect(paused.run).toMatchObject({ status: "paused", control: null });
    const asked = (await (await fetch(`${studio.url}/api/runs/session/${live}/pause`, { method: "POST", headers: json, body: "{}" })).json()) as { run: { status: string; control: string | null } };
    expect(asked.run).toMatchObject({ status: "running", control: "pause" });
    const unknown = await fetch(`${studio.url}/api/runs/session/ffffffff`);
    expect(unknown.status).toBe(404);
    const badBudget = await fetch(`${studio.url}/api/runs/session/${orphan}/resume`, { method: "POST", headers: json, body: '{"maxCost":"lots"}' });
    expect(badBudget.status).toBe(400);
  });

  it("steers a session: the guidance is pending on its run page until its agent acknowledges it", async () => {
    const steer = (body: string) => fetch(`${studio.url}/api/runs/session/${orphan}/steer`, { method: "POST", headers: json, body });
    expect((await steer("{}")).status).toBe(400);
    expect((await steer('{"text": "   "}')).status).toBe(400);
    expect((await steer('{"text": "x", "force": true}')).status).toBe(400);
    const ok = await steer('{"text": "Keep the public API stable"}');
    expect(ok.status).toBe(200);
    // A second steer is listed too, each under its own guidance event.
    expect((await steer('{"text": "Add a changelog entry"}')).status).toBe(200);
    const d = (await (await fetch(`${studio.url}/api/runs/session/${orphan}`)).json()) as { pending_replans: { text: string | null; event_id: string | null; deferred: boolean }[] };
    expect(d.pending_replans.map((p) => [p.text, p.deferred])).toEqual([
      ["Keep the public API stable", false],
      ["Add a changelog entry", false],
    ]);
    expect(d.pending_replans.every((p) => /^evt_/.test(p.event_id ?? ""))).toBe(true);
  });

  it("steers a session whose worktree is gone: deferred (no guidance event yet), each listed, and named once the session applies it", async () => {
    const steer = (text: string) => fetch(`${studio.url}/api/runs/session/${away}/steer`, { method: "POST", headers: json, body: JSON.stringify({ text }) });
    expect((await steer("Keep the public API stable")).status).toBe(200);
    expect((await steer("Add a changelog entry")).status).toBe(200);
    type Detail = { pending_replans: { text: string | null; event_id: string | null; deferred: boolean }[] };
    const d = (await (await fetch(`${studio.url}/api/runs/session/${away}`)).json()) as Detail;
    expect(d.pending_replans.map((p) => [p.text, p.event_id, p.deferred])).toEqual([
      ["Keep the public API stable", null, true],
      ["Add a changelog entry", null, true],
    ]);
    // The session applies the first when its worktree is back (as a resume does): pending under its guidance event now.
    const records = SqliteSessionRecords.open(join(dir, "pulse.db"));
    const first = (await records.events(away)).find((e) => e.type === "guidance.steered")!;
    await records.appendEvents(away, [{ at: new Date().toISOString(), type: "guidance.steer_applied", data: { type: "guidance.steer_applied", steer_seq: first.seq, event_id: "g-applied-1", sha256: "0".repeat(64) } }]);
    await records.close();
    const applied = (await (await fetch(`${studio.url}/api/runs/session/${away}`)).json()) as Detail;
    expect(applied.pending_replans.map((p) => [p.text, p.event_id, p.deferred])).toEqual([
      ["Keep the public API stable", "g-applied-1", false],
      ["Add a changelog entry", null, true],
    ]);
  });

  it("replays what a page missed after its Last-Event-ID", async () => {
    const feed = `${studio.url}/api/events?loop=examples.hello`;
    const first = await readFeed(feed, {}, (es) => es.some((e) => e.type === "hello"));
    const last = first.at(-1)!.id;
    // While no page is connected, an iteration runs.
    const r = (await (await fetch(`${studio.url}/api/loops/examples.hello/trigger`, { method: "POST", headers: json, body: "{}" })).json()) as { trace_id: string };
    const missed = await readFeed(feed, { "last-event-id": String(last) }, (es) => es.some((e) => e.type === "host" && e.data.type === "iteration.finished"));
    const types = missed.filter((e) => e.type === "host" && e.data.trace_id === r.trace_id).map((e) => e.data.type);
    expect(types.filter((t) => t.startsWith("iteration."))).toEqual(["iteration.started", "iteration.finished"]);
    // The hello loop's signal goes to examples.listener, which this studio does not host: dropped, and said.
    expect(types.filter((t) => !t.startsWith("iteration.")).every((t) => t === "signal.dropped")).toBe(true);
    expect(missed.every((e) => e.id > last)).toBe(true);
    const finished = missed.find((e) => e.data.type === "iteration.finished")!;
    expect(finished.data.phases.map((p: { phase_id: string }) => p.phase_id)).toEqual(["fetch", "decide", "apply", "learn"]);
    // Another loop's page would not get them: the scope filters by loop.
    const other = await readFeed(`${studio.url}/api/events?loop=no.such`, { "last-event-id": String(last) }, (es) => es.length > 0);
    expect(other.filter((e) => e.type === "host")).toEqual([]);
  });
});
