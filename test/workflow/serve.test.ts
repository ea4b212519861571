/**
 * The workflow over `pulse serve` (a real server process): REST start, status, events, stop,
 * steer and resume, and the MCP tools at /mcp; a request naming checks, a script outside --allow-scripts
 * and an unknown workflow refused, each with the near miss that passes.
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, describe, expect, it } from "vitest";
import { startServe, type Served } from "../session/serve-process.js";
import { GuidanceSidecar } from "../../src/coding/guidance/sidecar.js";
import { FIXED_ADD, git, PREFLIGHT, turn, until, worlds, writeScript } from "./helpers.js";

const world = worlds();
const served: Served[] = [];
afterAll(async () => {
  await Promise.all(served.map((s) => s.stop()));
});

async function call(base: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: Record<string, any> }> {
  const r = await fetch(`${base}${path}`, { method, ...(body !== undefined ? { headers: { "content-type": "application/json" }, body: JSON.stringify(body) } : {}) });
  return { status: r.status, json: (await r.json()) as Record<string, any> };
}

describe("pulse serve: workflows over REST and MCP", () => {
  it("starts, stops and resumes a workflow over REST, and offers the workflow tools over MCP", async () => {
    const w = world();
    const scripts = join(w.dir, "scripts");
    mkdirSync(scripts);
    const script = writeScript(w, [PREFLIGHT(), { ...turn(1, { "src/math.js": FIXED_ADD }, "fix(math): add adds"), shell: ["sleep 30"] }, turn(2, {}, "fix(math): add adds"), turn(3, { "CHANGELOG.md": "- add\n" }, "docs: changelog")], "scripts/flow.json");
    const s = await startServe(w.dir, ["--listen", "0", "--allow-scripts", scripts, "--store", w.store], { PULSE_WORKTREES: w.worktrees });
    served.push(s);
    const plan = "# Math\n\n- Fix add\n- Add a changelog\n";

    // Refusals first: checks named by a request, a script from elsewhere, an unknown workflow.
    const verify = await call(s.url, "POST", "/api/workflows", { plan, repo: w.repo, driver: "scripted", script, verify: "rm -rf /" });
    expect(verify.status).toBe(400);
    expect(verify.json.error).toMatchObject({ code: "BAD_REQUEST", field: "verify" });
    const elsewhere = await call(s.url, "POST", "/api/workflows", { plan, repo: w.repo, driver: "scripted", script: writeScript(w, [PREFLIGHT()], "outside.json") });
    expect(elsewhere.status).toBe(403);
    expect((await call(s.url, "GET", "/api/workflows/abcd1234")).status).toBe(404);
    expect((await call(s.url, "GET", "/api/workflows")).json.workflows).toEqual([]);
    // What a web page could send: a form (no JSON), a foreign Origin; refused before anything starts.
    const start = JSON.stringify({ plan, repo: w.repo, driver: "scripted", script });
    expect((await fetch(`${s.url}/api/workflows`, { method: "POST", headers: { "content-type": "text/plain" }, body: start })).status).toBe(415);
    expect((await fetch(`${s.url}/api/workflows`, { method: "POST", headers: { "content-type": "application/json", origin: "http://evil.example" }, body: start })).status).toBe(403);
    expect((await call(s.url, "GET", "/api/workflows")).json.workflows).toEqual([]);

    const started = await call(s.url, "POST", "/api/workflows", { plan, repo: w.repo, base: "main", driver: "scripted", script });
    expect(started.status, JSON.stringify(started.json)).toBe(201);
    const id = started.json.workflow.workflow.id as string;
    const tree = join(w.worktrees, `repo-workflow-${id.slice(0, 8)}`);
    await until("the agent's edit", () => existsSync(join(tree, "src/math.js")) && git(tree, "status", "--porcelain").includes("src/math.js"));
    const stopped = await call(s.url, "POST", `/api/workflows/${id}/stop`, {});
    expect(stopped.status).toBe(200);
    let status = "";
    for (let i = 0; i < 200 && status !== "stopped"; i++) {
      status = (await call(s.url, "GET", `/api/workflows/${id}`)).json.workflow.status;
      if (status !== "stopped") await new Promise((r) => setTimeout(r, 50));
    }
    expect(status).toBe("stopped");
    expect((await call(s.url, "POST", `/api/workflows/${id}/stop`, {})).status).toBe(409);

    // Steered while stopped (its worktree kept): recorded in its guidance; acknowledged from outside before it resumes.
    expect((await call(s.url, "POST", `/api/workflows/${id}/steer`, { text: "x", by: "me" })).status).toBe(400);
    const empty = await call(s.url, "POST", `/api/workflows/${id}/steer`, { text: " " });
    expect([empty.status, empty.json.error.field]).toEqual([400, "text"]);
    const steered = await call(s.url, "POST", `/api/workflows/${id}/steer`, { text: "Keep add pure." });
    expect(steered.status, JSON.stringify(steered.json)).toBe(200);
    expect(steered.json).toMatchObject({ deferred: false, event: { path: ".pulse/guidance.md", kind: "modified" }, workflow: { workflow: { id } } });
    writeFileSync(join(tree, ".pulse/plan.md"), "# Plan\n\n1. Keep add pure.\n");
    expect((await (await GuidanceSidecar.open({ root: tree })).ack(steered.json.event.id)).accepted).toBe(true);

    expect((await call(s.url, "POST", `/api/workflows/${id}/resume`, {})).status).toBe(200);
    let summary: Record<string, any> = {};
    for (let i = 0; i < 400 && summary.workflow?.status !== "completed"; i++) {
      summary = (await call(s.url, "GET", `/api/workflows/${id}`)).json;
      if (summary.workflow.status !== "completed") await new Promise((r) => setTimeout(r, 50));
    }
    expect(summary.workflow.status).toBe("completed");
    expect(summary.pulses.map((p: { status: string }) => p.status)).toEqual(["succeeded", "succeeded"]);
    expect(git(w.repo, "log", "--format=%s", `main..${summary.workflow.branch}`).split("\n")).toEqual(["docs: changelog", "fix(math): add adds"]);
    const events = (await call(s.url, "GET", `/api/workflows/${id}/events?after=0`)).json;
    expect(events.events.map((e: { type: string }) => e.type)).toContain("workflow.finished");
    expect(events.events.find((e: { type: string }) => e.type === "guidance.steered").data).toMatchObject({ by: "api", event_id: steered.json.event.id, text: "Keep add pure." });
    expect(events.events.map((e: { type: string }) => e.type)).not.toContain("guidance.held");
    expect((await call(s.url, "POST", `/api/workflows/${id}/steer`, { text: "more" })).status).toBe(409);
    expect(events.next).toBe(events.events.at(-1).seq);

    const client = new Client({ name: "test", version: "1" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`)));
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toEqual(expect.arrayContaining(["workflow_start", "workflow_status", "workflow_list", "workflow_events", "workflow_stop", "workflow_resume", "workflow_steer", "pulse_start"]));
      const listed = await client.callTool({ name: "workflow_list", arguments: {} });
      expect(JSON.parse((listed.content as { text: string }[])[0]!.text)[0]).toMatchObject({ id, status: "completed" });
      const refused = await client.callTool({ name: "workflow_resume", arguments: { workflowId: id } });
      expect(refused.isError).toBe(true);
      expect((refused.content as { text: string }[])[0]!.text).toContain("completed: there is nothing to resume");
      const late = await client.callTool({ name: "workflow_steer", arguments: { workflowId: id, text: "more" } });
      expect([late.isError, (late.content as { text: string }[])[0]!.text]).toEqual([true, `workflow ${id} is completed: there is nothing left to steer`]);
    } finally {
      await client.close();
    }
  }, 120_000);
});
