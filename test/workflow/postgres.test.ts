/**
 * `pulse workflow` with its records in the PostgreSQL store (a schema of its own migrated by the
 * real `pulse store migrate`, dropped after): a workflow run to completion, stopped from another
 * process through the database and resumed, read back by `status` and exported with the store.
 * Skipped with the reason where no PostgreSQL answers, except under CI=true, where that fails.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { runBin } from "../cli/run-bin.js";
import { describeWith, postgresService } from "../helpers/services.js";
import type { PgSchema } from "../adapters/postgres/helpers.js";
import { migratedSchema } from "../session/postgres-helpers.js";
import { FIXED_ADD, git, PREFLIGHT, startAsync, turn, until, worlds, writeFile, writeScript, type World } from "./helpers.js";

const world = worlds();

describeWith(await postgresService(), "pulse workflow on the PostgreSQL store", (url) => {
  const schemas: PgSchema[] = [];
  afterEach(async () => {
    for (const s of schemas.splice(0)) await s.drop();
  });
  const run = (w: World, store: string, args: string[]) => runBin("pulse", [...args, "--store", store], { env: w.env });

  it("runs, is stopped from another process, resumes and is exported with the store", async () => {
    const s = migratedSchema(url);
    schemas.push(s);
    const w = world();
    const pgWorld = { ...w, store: s.url };
    const plan = writeFile(w, "plan.md", "- Fix add\n- Add a changelog\n");
    const script = writeScript(w, [PREFLIGHT(), { ...turn(1, { "src/math.js": FIXED_ADD }, "fix(math): add adds"), shell: ["sleep 30"] }, turn(2, {}, "fix(math): add adds"), turn(3, { "CHANGELOG.md": "- add\n" }, "docs: changelog")]);
    const started = startAsync(pgWorld, plan, script);
    const id = await started.id;
    const tree = join(w.worktrees, `repo-workflow-${id.slice(0, 8)}`);
    await until("the agent's edit", () => existsSync(join(tree, "src/math.js")) && git(tree, "status", "--porcelain").includes("src/math.js"));
    expect(run(w, s.url, ["workflow", "stop", id.slice(0, 8)]).code).toBe(0);
    const ended = await started.exited;
    expect(ended.code, ended.stderr).toBe(0);
    const stopped = JSON.parse(run(w, s.url, ["workflow", "status", id, "--json"]).stdout);
    expect(stopped.workflow.status).toBe("stopped");
    expect(stopped.pulses[0]).toMatchObject({ status: "stopped", recovery: true });

    const resumed = run(w, s.url, ["workflow", "resume", id, "--json"]);
    expect(resumed.code, resumed.stderr).toBe(0);
    const done = JSON.parse(resumed.stdout);
    expect(done.workflow.status).toBe("completed");
    expect(done.preflight.status).toBe("completed");
    expect(done.baselines.commands).toMatchObject([{ command: "node --test", exit: 1 }]);
    expect(git(w.repo, "log", "--format=%s", `main..${done.workflow.branch}`).split("\n")).toEqual(["docs: changelog", "fix(math): add adds"]);
    const logs = run(w, s.url, ["workflow", "logs", id]);
    expect(logs.stdout).toMatch(/pulse 1 turn 1: stop[\s\S]*workflow stopped[\s\S]*workflow \w{8} started \(pulse 1 \(stopped\) restarted[\s\S]*workflow completed/);

    const exported = runBin("pulse", ["store", "export", "--jsonl", "--store", s.url]);
    expect(exported.code, exported.stderr).toBe(0);
    const tables = new Set(exported.stdout.trim().split("\n").map((l) => (JSON.parse(l) as { table: string }).table));
    for (const t of ["pulse_workflows", "pulse_workflow_pulses", "pulse_preflight_setups", "pulse_workflow_events"]) expect(tables).toContain(t);
  }, 120_000);

  it("refuses a schema that was never migrated in one line (exit 2)", async () => {
    const { pgSchema } = await import("../adapters/postgres/helpers.js");
    const bare = pgSchema(url);
    schemas.push(bare);
    const w = world();
    const r = run(w, bare.url, ["workflow", "status"]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toMatch(/^pulse workflow: --store: /);
  }, 60_000);
});
