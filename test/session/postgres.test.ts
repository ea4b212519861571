/**
 * `pulse session` with its records in the PostgreSQL store, as a user runs it (the built bin,
 * real processes, real git repositories, a schema of its own migrated by the real `pulse store
 * migrate` and dropped after): a session run to completion and read back by other processes
 * (and by the seed's own SQL), a detached session paused and aborted from another process
 * through the database, the agent's MCP server reaching the same records, and a schema without
 * session tables refused in one line (exit 2). Skipped with the reason where no PostgreSQL
 * answers, except under CI=true, where that fails.
 */
import { spawn } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterEach, expect, it } from "vitest";
import { ROOT, runBin } from "../cli/run-bin.js";
import { describeWith, postgresService } from "../helpers/services.js";
import { pgSchema, type PgSchema } from "../adapters/postgres/helpers.js";
import { gitLog, gitRepo, removeDir, worktreesRoot } from "./helpers.js";
import { migratedSchema } from "./postgres-helpers.js";
import { json, steeredSteps, steerFromOtherProcesses, until } from "./steering.js";

const BIN = join(ROOT, "dist/bin/pulse.mjs");

describeWith(await postgresService(), "pulse session on the PostgreSQL store", (url) => {
  const dirs: string[] = [];
  const schemas: PgSchema[] = [];
  afterEach(async () => {
    for (const d of dirs.splice(0)) removeDir(d);
    for (const s of schemas.splice(0)) await s.drop();
  });

  /** A repository with a script, and `pulse session …` run in it against `store` (env added). */
  function setup(steps: unknown[], store: string) {
    const repo = gitRepo();
    dirs.push(repo);
    const script = join(repo, ".pulse-script.json");
    writeFileSync(script, JSON.stringify({ steps }));
    writeFileSync(join(repo, ".git", "info", "exclude"), ".pulse-script.json\n");
    const env = { HOME: repo, PULSE_WORKTREES: worktreesRoot() };
    return {
      repo,
      script,
      env,
      pulse: (...args: string[]) => runBin("pulse", ["session", ...args, "--store", store], { cwd: repo, env }),
      /** Without --store: the store comes from $PULSE_STORE. */
      pulseEnv: (...args: string[]) => runBin("pulse", ["session", ...args], { cwd: repo, env: { ...env, PULSE_STORE: store } }),
    };
  }

  const migrated = () => {
    const s = migratedSchema(url);
    schemas.push(s);
    return s;
  };

  it("runs a session to completion with its records in PostgreSQL; status and list in other processes read them, and so does the seed's SQL", async () => {
    const s = migrated();
    const { repo, script, pulse, pulseEnv } = setup(
      [
        { match: { iteration: 1 }, files: { "greet.js": "export const greet = () => 'hi';\n" }, commit: "feat: greet", text: "Created greet.js.\n<signal>CONTINUE</signal>", usage: { inputTokens: 100, outputTokens: 20 } },
        { match: { iteration: 2 }, text: "<signal>COMPLETE</signal>" },
      ],
      s.appUrl,
    );
    const r = pulse("start", "--goal", "Add greet", "--driver", "scripted", "--script", script, "--max-iterations", "5");
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("complete after 2 iterations: 1 commit");
    const list = json(pulse("list", "--json"));
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ status: "complete", current_iteration: 2, total_commits: 1, total_tokens_used: 120, created_by: "cli", driver: { name: "scripted" } });
    const id = list[0].id as string;
    expect(gitLog(repo, `pulse/session/${id.slice(0, 8)}`)).toEqual(["feat: greet", "initial"]);
    // $PULSE_STORE names it as well as --store; a unique prefix finds the session.
    const status = pulseEnv("status", id.slice(0, 8));
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain("status complete · last signal COMPLETE");
    const detail = json(pulse("status", id, "--json"));
    expect(detail.iterations.map((i: { signal: string; files_changed: string[] }) => [i.signal, i.files_changed])).toEqual([
      ["CONTINUE", ["greet.js"]],
      ["COMPLETE", []],
    ]);
    expect(pulse("list", "--status", "running").stdout).toBe("no sessions\n");
    // The seed's monitoring query runs on the tables as they are (jsonb progress_log, text[] files_changed).
    const seed = await s.admin(
      `SELECT s.id, s.current_iteration, s.max_iterations, s.status, s.last_signal, i.signal, i.output_summary, i.commit_hash, s.progress_log->0->>'summary' AS first, i.files_changed
       FROM "${s.schema}".pulse_sessions s LEFT JOIN "${s.schema}".pulse_iterations i ON i.session_id = s.id
       WHERE s.status = 'complete' ORDER BY i.iteration_number DESC`,
    );
    expect(seed.rows.map((row) => [row.id, row.current_iteration, row.max_iterations, row.last_signal, row.signal, row.files_changed])).toEqual([
      [id, 2, 5, "COMPLETE", "COMPLETE", []],
      [id, 2, 5, "COMPLETE", "CONTINUE", ["greet.js"]],
    ]);
    expect(seed.rows[0].first).toMatch(/Created greet\.js/);
    // Exported with the store, after its own tables.
    const exported = runBin("pulse", ["store", "export", "--jsonl", "--store", s.appUrl]);
    expect(exported.code, exported.stderr).toBe(0);
    const rows = exported.stdout.trim().split("\n").map((l) => JSON.parse(l) as { table: string; row: Record<string, unknown> });
    expect(rows.filter((r) => r.table === "pulse_sessions").map((r) => [r.row.id, r.row.status, r.row.total_tokens_used])).toEqual([[id, "complete", 120]]);
    expect(rows.filter((r) => r.table === "pulse_iterations").map((r) => r.row.files_changed)).toEqual([["greet.js"], []]);
    // Connected as an owner (the server's superuser), it works as the runtime's role and says so.
    const asOwner = runBin("pulse", ["session", "list", "--store", s.url], { cwd: repo });
    expect(asOwner.code, asOwner.stderr).toBe(0);
    expect(asOwner.stdout).toContain(id.slice(0, 8));
    expect(asOwner.stderr).toContain(`working as ${s.appRole} (SET ROLE)`);
  }, 60_000);

  it("is steered from other processes through PostgreSQL: a detached session is paused after its iteration, resumed, and aborted with a recovery commit", async () => {
    const s = migrated();
    const { steps, go } = steeredSteps(dirs);
    const { repo, script, pulse } = setup(steps, s.appUrl);
    const { id } = await steerFromOtherProcesses({
      repo,
      script,
      go,
      pulse,
      // The request is in the database, for the runner in the other process to act on.
      whilePauseRequested: async (id) => expect((await s.admin(`SELECT control FROM "${s.schema}".pulse_sessions WHERE id = $1`, [id])).rows[0].control).toBe("pause"),
    });
    // Its output went to .pulse/sessions/ID.log of the working directory (no store file to sit beside).
    expect(existsSync(join(repo, ".pulse", "sessions", `${id}.log`))).toBe(true);
    expect(pulse("abort", id).stderr).toMatch(/is already aborted/);
  }, 90_000);

  it("resumes a session whose runner was killed mid-turn from the journal in PostgreSQL: the turn dispatched again under the same iteration, recorded once, the audit trail verified", async () => {
    const s = migrated();
    const { repo, script, pulse } = setup(
      [
        { match: { iteration: 1 }, files: { "a.js": "1\n" }, commit: "a", text: "<signal>CONTINUE</signal>" },
        // Hangs until pulse is killed; dispatched again, it finds what the first attempt left and finishes.
        { match: { iteration: 2 }, shell: ["[ -e wip.js ] || sleep 50", "echo 2 > b.js"], commit: "b", text: "<signal>COMPLETE</signal>" },
      ],
      s.appUrl,
    );
    const started = pulse("start", "--goal", "crash me", "--driver", "scripted", "--script", script, "--detach");
    expect(started.code, started.stderr).toBe(0);
    const id = /session ([0-9a-f-]{36}) started/.exec(started.stdout)![1]!;
    const running = await until(() => {
      const d = json(pulse("status", id, "--json"));
      return d.iterations[1]?.status === "running" ? d : undefined;
    });
    writeFileSync(join(running.session.worktree_path, "wip.js"), "// work in progress\n");
    process.kill(running.session.runner_pid, "SIGKILL");
    await until(() => (json(pulse("status", id, "--json")).live === false ? true : undefined));
    const resumed = pulse("resume", id);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toMatch(/iteration 2 was interrupted during its agent's turn when its runner stopped; what the agent left is in recovery commit [0-9a-f]{8}; the turn is dispatched again as iteration 2 \(build_context not run again\)/);
    const d = json(pulse("status", id, "--json"));
    expect(d.session).toMatchObject({ status: "complete", current_iteration: 2 });
    expect(d.iterations.map((i: { iteration_number: number; status: string }) => [i.iteration_number, i.status])).toEqual([
      [1, "complete"],
      [2, "complete"],
    ]);
    expect(gitLog(repo, `pulse/session/${id.slice(0, 8)}`)).toEqual(["b", `[RECOVERY] session ${id}: work left by iteration 2, interrupted; its turn is dispatched again`, "a", "initial"]);
    // The resumed iteration's trace in the store: build_context once, the turn re-dispatched once.
    const events = (await s.admin(`SELECT event_type, phase_id, trace_id FROM "${s.schema}".audit_events WHERE workspace_id = $1 ORDER BY chain_seq`, [id])).rows as { event_type: string; phase_id: string | null; trace_id: string }[];
    const trace = events.find((e) => e.event_type === "session.turn_redispatched")!.trace_id;
    const mine = events.filter((e) => e.trace_id === trace);
    expect(mine.filter((e) => e.event_type === "phase.completed" && e.phase_id === "build_context")).toHaveLength(1);
    expect(mine.filter((e) => e.event_type === "session.turn_redispatched")).toHaveLength(1);
    expect(mine.filter((e) => e.event_type === "iteration.resumed")).toHaveLength(1);
    const verified = runBin("pulse", ["audit", "verify", "--store", s.appUrl], { cwd: repo });
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
  }, 90_000);

  it("hands the agent's MCP server the same records: pulse session mcp --store postgres://… --session ID serves that session", async () => {
    const s = migrated();
    const { script, pulse, repo, env } = setup([{ text: "<signal>COMPLETE</signal>" }], s.appUrl);
    expect(pulse("start", "--goal", "one", "--driver", "scripted", "--script", script).code).toBe(0);
    expect(pulse("start", "--goal", "two", "--driver", "scripted", "--script", script).code).toBe(0);
    const [own, other] = json(pulse("list", "--json")) as { id: string }[];
    const client = new Client({ name: "agent", version: "1.0.0" });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [BIN, "session", "mcp", "--store", s.appUrl, "--session", own!.id], cwd: repo, env: { PATH: process.env.PATH ?? "", ...env }, stderr: "pipe" }));
    try {
      expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(["pulse_ack_replan", "pulse_should_interrupt", "pulse_signal", "pulse_status"]);
      const mine = await client.callTool({ name: "pulse_status", arguments: {} });
      expect(JSON.parse((mine.content as { text: string }[])[0]!.text).session).toMatchObject({ id: own!.id, goal: "two", status: "complete" });
      const theirs = await client.callTool({ name: "pulse_status", arguments: { sessionId: other!.id } });
      expect(theirs.isError).toBe(true);
    } finally {
      await client.close();
    }
  }, 60_000);

  it("pulse serve --store postgres://… runs a session started over REST; another process reads it from the database", async () => {
    const s = migrated();
    const { script, pulse, repo, env } = setup([{ match: { iteration: 1 }, files: { "a.js": "1\n" }, commit: "feat: a", text: "<signal>CONTINUE</signal>" }, { text: "<signal>COMPLETE</signal>" }], s.appUrl);
    const child = spawn(process.execPath, [BIN, "serve", "--listen", "0", "--store", s.appUrl, "--allow-scripts", repo], { cwd: repo, env: { PATH: process.env.PATH ?? "", ...env }, stdio: ["ignore", "pipe", "pipe"] });
    const exited = new Promise((r) => child.once("exit", r));
    try {
      const base = await new Promise<string>((resolve, reject) => {
        let out = "";
        child.stdout!.on("data", (d) => {
          out += d;
          const m = /serving sessions at (http:\/\/\S+)\/api\/pulse/.exec(out);
          if (m) resolve(m[1]!);
        });
        child.once("exit", (code) => reject(new Error(`pulse serve exited ${code}: ${out}`)));
      });
      const res = await fetch(`${base}/api/pulse/start`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ goal: "Write a.js", projectPath: repo, driver: "scripted", script, maxIterations: 4 }) });
      expect(res.status).toBe(201);
      const id = ((await res.json()) as { session: { id: string } }).session.id;
      const done = await until(() => {
        const x = json(pulse("status", id, "--json")).session;
        return x.status === "complete" ? x : undefined;
      });
      expect(done).toMatchObject({ created_by: "api", current_iteration: 2, total_commits: 1 });
    } finally {
      child.kill("SIGTERM");
      await exited;
    }
  }, 60_000);

  it("refuses a schema without session tables in one line naming pulse store migrate (exit 2), and takes it once migrated", async () => {
    const bare = pgSchema(url);
    schemas.push(bare);
    const { pulse, pulseEnv, repo } = setup([{ text: "<signal>COMPLETE</signal>" }], bare.url);
    const noStore = pulse("list");
    expect(noStore.code).toBe(2);
    expect(noStore.stderr).toMatch(new RegExp(`^pulse session: --store: .*run pulse store migrate --store '[^']*schema=${bare.schema}'.*\\n$`));
    expect(noStore.stderr.trim().split("\n")).toHaveLength(1);
    // Named by $PULSE_STORE, the line says so.
    const fromEnv = pulseEnv("status", "abcd1234");
    expect(fromEnv.code).toBe(2);
    expect(fromEnv.stderr).toMatch(/^pulse session: PULSE_STORE: .*run pulse store migrate/);
    // pulse serve refuses it the same way, before listening.
    const serve = runBin("pulse", ["serve", "--listen", "0", "--store", bare.url], { cwd: repo });
    expect(serve.code).toBe(2);
    expect(serve.stderr).toMatch(/--store: .*run pulse store migrate/);
    expect(serve.stderr).not.toMatch(/\n\s+at /);

    // A store migrated before sessions were kept there (its own tables, no session tables).
    const older = migrated();
    // (Nor the run views over them, or the agent's run tables, which came later still.)
    await older.admin(`DROP VIEW "${older.schema}".pulse_run_steps, "${older.schema}".pulse_runs; DROP TABLE "${older.schema}".pulse_agent_steps, "${older.schema}".pulse_agent_runs`);
    await older.admin(`DELETE FROM "${older.schema}".meta WHERE key = 'run_schema_version'`);
    await older.admin(`DROP TABLE "${older.schema}".pulse_session_events, "${older.schema}".pulse_agent_processes, "${older.schema}".pulse_iterations, "${older.schema}".pulse_sessions`);
    await older.admin(`DELETE FROM "${older.schema}".meta WHERE key = 'session_schema_version'`);
    const o = runBin("pulse", ["session", "list", "--store", older.appUrl], { cwd: repo });
    expect(o.code).toBe(2);
    expect(o.stderr).toMatch(new RegExp(`^pulse session: --store: schema ${older.schema} at .* has no session tables: run pulse store migrate --store '[^']*schema=${older.schema}' with an owner's credentials first\\n$`));
    // The near miss: migrating again adds them, and the same command works.
    const again = runBin("pulse", ["store", "migrate", "--store", older.url]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain("session tables created at version 5");
    const ok = runBin("pulse", ["session", "list", "--store", older.appUrl], { cwd: repo });
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toBe("no sessions\n");
  }, 60_000);
});
