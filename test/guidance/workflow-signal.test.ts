/**
 * The replan_to_session connection for a workflow: `pulse guidance serve --signal-to … --workflow
 * ID` sends a SurpriseSignal when its guidance.md is edited, and `pulse serve` writes it into the
 * guidance of the workflow's worktree (the next pulse turn is held to replan), once per
 * CloudEvents id; a finished workflow refuses a new signal but still answers a redelivery; the
 * sender's usage errors say what is missing (each with the near miss accepted).
 */
import { createHash, randomUUID } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { SqliteWorkflowRecords } from "../../adapters/sqlite/workflow-records.js";
import { surpriseEnvelope } from "../../src/coding/guidance/surprise.js";
import { runBin } from "../cli/run-bin.js";
import { removeDir } from "../session/helpers.js";
import { startServe, type Served } from "../session/serve-process.js";
import { until } from "../session/steering.js";
import { serveGuidance, type Served as Sidecar } from "./serve-process.js";

const sha = (text: string) => createHash("sha256").update(text).digest("hex");
const dirs: string[] = [];
let served: Served | undefined;
let sidecar: Sidecar | undefined;
afterAll(async () => {
  await sidecar?.stop();
  await served?.stop();
  dirs.forEach(removeDir);
});

describe("a guidance sidecar steers a workflow of pulse serve by SurpriseSignal", () => {
  it("an edit is written into the workflow's worktree guidance, once per signal id; a finished workflow refuses a new one", async () => {
    const dir = mkdtempSync(join(tmpdir(), "pulse-wf-signal-"));
    dirs.push(dir);
    const store = join(dir, "pulse.db");
    const worktree = join(dir, "worktree");
    mkdirSync(worktree);
    const records = SqliteWorkflowRecords.open(store);
    const make = async (id: string, status: "stopped" | "completed") => {
      await records.create({ id, title: "t", plan_path: null, repo_path: dir, base_ref: "main", base_sha: "0".repeat(40), base_note: null, branch_name: `pulse/workflow/${id.slice(0, 8)}`, worktree_path: worktree, driver: { name: "scripted" }, verify: { checks: [] } }, [{ id: randomUUID(), number: 1, title: "Fix add", description: "Fix add" }]);
      await records.update(id, { status });
    };
    const open = randomUUID();
    const done = randomUUID();
    await make(open, "stopped");
    await make(done, "completed");
    await records.close();
    served = await startServe(dir, ["--listen", "0", "--store", store]);
    const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = { "content-type": "application/json" }) => {
      const res = await fetch(`${served!.url}${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
      return { status: res.status, body: (await res.json()) as any };
    };

    const project = mkdtempSync(join(tmpdir(), "pulse-wf-sidecar-"));
    dirs.push(project);
    sidecar = await serveGuidance(project, ["--signal-to", served.url, "--workflow", open]);
    expect(sidecar.output()).toContain(`plan-invalidating changes signalled to ${served.url}/api/workflows/${open}/signal`);
    const GUIDANCE = "# Guidance\n\nKeep the public API stable.\n";
    writeFileSync(join(project, ".pulse", "guidance.md"), GUIDANCE);
    const line = await until(() => /signal (evt_\S+) → workflow \S+: steered\n/.exec(sidecar!.output()) ?? undefined, 20_000);
    const evt = line[1]!;
    const steered = async (id: string) => ((await call("GET", `/api/workflows/${id}/events?after=0`)).body.events as { type: string; data: any }[]).filter((e) => e.type === "guidance.steered");
    const first = await steered(open);
    expect(first).toHaveLength(1);
    expect(first[0]!.data).toMatchObject({ workflow_id: open, by: "signal", signal_id: evt, guidance_event_id: evt });
    expect(readFileSync(join(worktree, ".pulse", "guidance.md"), "utf8")).toContain("Keep the public API stable.");

    // A redelivery of the same id steers nothing more, and answers with the first steer's event.
    const envelope = surpriseEnvelope({ event: { id: evt, timestamp: new Date().toISOString(), kind: "modified", path: ".pulse/guidance.md", sha256: sha(GUIDANCE), size: GUIDANCE.length }, files: [{ path: ".pulse/guidance.md", kind: "modified", sha256: sha(GUIDANCE), previous_sha256: null, text: GUIDANCE }], session: open, root: project });
    const ce = { "content-type": "application/cloudevents+json" };
    const again = await call("POST", `/api/workflows/${open}/signal`, envelope, ce);
    expect(again).toMatchObject({ status: 200, body: { duplicate: true, event: { id: first[0]!.data.event_id } } });
    expect(await steered(open)).toHaveLength(1);
    // Refusals, each beside what is accepted: an invalid signal (400), a form post (415), an unknown workflow (404), a finished one (409).
    const other = { ...envelope, id: "evt_other" };
    expect(await call("POST", `/api/workflows/${open}/signal`, { ...other, data: { ...envelope.data, surprise_magnitude: 2 } }, ce)).toMatchObject({ status: 400, body: { error: { code: "BAD_SIGNAL", field: "data.surprise_magnitude" } } });
    expect((await call("POST", `/api/workflows/${open}/signal`, other, { "content-type": "application/x-www-form-urlencoded" })).status).toBe(415);
    expect((await call("POST", `/api/workflows/${randomUUID()}/signal`, other, ce)).status).toBe(404);
    expect(await call("POST", `/api/workflows/${done}/signal`, other, ce)).toMatchObject({ status: 409, body: { error: { code: "FINISHED" } } });
    expect(await steered(done)).toHaveLength(0);
    const second = await call("POST", `/api/workflows/${open}/signal`, other, ce);
    expect(second).toMatchObject({ status: 200, body: { duplicate: false, deferred: false } });
    expect(await steered(open)).toHaveLength(2);
  }, 90_000);

  it("usage: --workflow needs --signal-to, and --session and --workflow are one or the other", () => {
    const project = mkdtempSync(join(tmpdir(), "pulse-wf-sidecar-"));
    dirs.push(project);
    const serve = (args: string[]) => runBin("pulse", ["guidance", "serve", "-C", project, "--port", "0", ...args], { timeoutMs: 20_000 });
    const alone = serve(["--workflow", "w1"]);
    expect(alone.code).toBe(2);
    expect(alone.stderr).toMatch(/--workflow names the workflow --signal-to steers: give --signal-to URL too/);
    const both = serve(["--signal-to", "http://127.0.0.1:3002", "--session", "s1", "--workflow", "w1"]);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/--session and --workflow: give one/);
    const neither = serve(["--signal-to", "http://127.0.0.1:3002"]);
    expect(neither.code).toBe(2);
    expect(neither.stderr).toMatch(/--signal-to needs --session ID or --workflow ID/);
  });
});
