/**
 * `pulse session` as a user runs it (the built bin, real processes, real git repositories):
 * a foreground session with its live view, mistakes refused in one line, a detached session
 * steered from other processes (pause, abort with a recovery commit), and a runner killed with
 * SIGKILL mid-iteration whose session resumes from the records.
 */
import { spawnSync } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runBin } from "../cli/run-bin.js";
import { gitLog, gitRepo, removeDir, worktreesRoot } from "./helpers.js";
import { json, steeredSteps, steerFromOtherProcesses, until } from "./steering.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) removeDir(d);
});

function setup(steps: unknown[]): { repo: string; script: string; store: string; pulse: (...args: string[]) => ReturnType<typeof runBin> } {
  const repo = gitRepo();
  dirs.push(repo);
  const script = join(repo, ".pulse-script.json");
  writeFileSync(script, JSON.stringify({ steps }));
  writeFileSync(join(repo, ".git", "info", "exclude"), ".pulse-script.json\n");
  const store = join(repo, ".pulse", "pulse.db");
  return { repo, script, store, pulse: (...args) => runBin("pulse", ["session", ...args, "--store", store], { cwd: repo, env: { HOME: repo, PULSE_WORKTREES: worktreesRoot() } }) };
}


describe("pulse session (the bin)", () => {
  it("runs a session in the foreground with a live view, then lists it and shows its status", () => {
    const { repo, script, pulse } = setup([
      { match: { iteration: 1 }, files: { "greet.js": "export const greet = () => 'hi';\n" }, commit: "feat: greet", text: "Created greet.js.\n<signal>CONTINUE</signal>", usage: { inputTokens: 100, outputTokens: 20 } },
      { match: { iteration: 2 }, text: "<signal>COMPLETE</signal>" },
    ]);
    const r = pulse("start", "--goal", "Add greet", "--driver", "scripted", "--script", script, "--max-iterations", "5");
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^session [0-9a-f-]{36} · "Add greet"/);
    expect(r.stdout).toMatch(/#1 · CONTINUE · commit [0-9a-f]{8} · 1 file · 120 tokens · \$0\.\d{4}\n {4}Created greet\.js\./);
    expect(r.stdout).toContain("complete after 2 iterations: 1 commit");
    // Every iteration's receipt: who, the tokens by kind, the dollars and where the price came from.
    expect(r.stdout).toMatch(/\n {4}receipt: scripted · 100 in \/ 20 out tokens · \$0\.\d{4}, priced at the default rate \(model unknown\)\n/);
    expect(r.stderr).toContain("📍 Iteration 1/5: Created greet.js. Continuing...");
    expect(r.stderr).toContain("✅ Session complete (2 iterations, 1 commit)");
    const list = json(pulse("list", "--json"));
    // The agent's commit is on the session's own branch; the user's checkout is where it was, and clean.
    const branch = `pulse/session/${list[0].id.slice(0, 8)}`;
    expect(gitLog(repo, branch)).toEqual(["feat: greet", "initial"]);
    expect(gitLog(repo)).toEqual(["initial"]);
    expect(spawnSync("git", ["status", "--porcelain"], { cwd: repo, encoding: "utf8" }).stdout).toBe("");
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ status: "complete", current_iteration: 2, total_commits: 1, created_by: "cli" });
    expect(pulse("list", "--status", "running").stdout).toBe("no sessions\n");
    const status = pulse("status", list[0].id.slice(0, 8));
    expect(status.stdout).toContain("status complete · last signal COMPLETE");
    // The receipt is kept with the iteration: status shows it long after the live view is gone.
    expect(status.stdout).toMatch(/#1\/5 · CONTINUE[^\n]*\n[^\n]*Created greet\.js\.\n {6}receipt: scripted · 100 in \/ 20 out tokens · \$0\.\d{4}, priced at the default rate \(model unknown\)\n/);
    const detail = json(pulse("status", list[0].id, "--json"));
    expect(detail.iterations[0].receipt).toEqual({ driver: "scripted", usage: { inputTokens: 100, outputTokens: 20 }, tokens: 120, costUsd: detail.iterations[0].cost_usd, costSource: "default_price" });
    // How to review and merge it (its worktree is gone once it completed; the branch stays).
    expect(status.stdout).toContain(`branch ${branch} from main (`);
    expect(status.stdout).toContain("its worktree is removed; the branch stays");
    expect(status.stdout).toContain(`log main..${branch}`);
    expect(status.stdout).toContain(`merge ${branch}`);
    expect(existsSync(list[0].worktree_path)).toBe(false);
    const logs = pulse("logs", list[0].id);
    expect(logs.stdout).toMatch(/── iteration 1\/5 · complete · CONTINUE · anchor none/);
  }, 30_000);

  it("refuses mistakes in one line, without a stack trace, and takes the near miss", () => {
    const { repo, script, pulse } = setup([{ text: "<signal>COMPLETE</signal>" }]);
    const cases: [string[], RegExp][] = [
      [["start", "--driver", "scripted", "--script", script], /required option '--goal <text>' not specified/],
      [["start", "--goal", "x", "--repo", join(repo, "nope"), "--driver", "scripted", "--script", script], /--repo: .*nope: no such directory/],
      [["start", "--goal", "x", "--driver", "scripted"], /--script: the scripted driver needs a script/],
      [["start", "--goal", "x", "--driver", "scripted", "--script", script, "--max-iterations", "0"], /--max-iterations: must be a whole number from 1 to 1000, got "0"/],
      [["start", "--goal", "x", "--driver", "scripted", "--script", script, "--context", "rag"], /--context: must be one of none, prefetch, mcp, hybrid/],
      [["list", "--status", "done"], /status: must be one of pending, running/],
    ];
    for (const [args, message] of cases) {
      const r = pulse(...args);
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    }
    const unknown = pulse("status", "00000000");
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe("pulse session: no session 00000000 (pulse session list shows them)\n");
    const ok = pulse("start", "--goal", "x", "--driver", "scripted", "--script", script, "--max-iterations", "1000", "--context", "none");
    expect(ok.code, ok.stderr).toBe(0);
  }, 30_000);

  it("is steered from other processes: a detached session is paused after its iteration, resumed, and aborted at once with a recovery commit", async () => {
    const { steps, go } = steeredSteps(dirs);
    const { repo, script, pulse } = setup(steps);
    const { id, worktree } = await steerFromOtherProcesses({ repo, script, go, pulse });
    // An aborted session's worktree stays until pulse session clean (--dry-run removes nothing).
    expect(existsSync(worktree)).toBe(true);
    const dry = pulse("clean", "--dry-run");
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain(`would remove ${worktree} (session ${id.slice(0, 8)}, branch pulse/session/${id.slice(0, 8)})`);
    expect(existsSync(worktree)).toBe(true);
    const cleaned = pulse("clean");
    expect(cleaned.stdout).toContain(`removed      ${worktree} (session ${id.slice(0, 8)}`);
    expect(existsSync(worktree)).toBe(false);
    expect(pulse("abort", id).stderr).toMatch(/is already aborted/);
  }, 60_000);

  it("follows a detached session's logs until it ends", () => {
    const { pulse, script } = setup([
      { match: { iteration: 1 }, delayMs: 400, files: { "a.js": "1\n" }, commit: "a", text: "Wrote a.js. <signal>CONTINUE</signal>" },
      { match: { iteration: 2 }, delayMs: 400, text: "Done. <signal>COMPLETE</signal>" },
    ]);
    const started = pulse("start", "--goal", "follow me", "--driver", "scripted", "--script", script, "--detach");
    const id = /session ([0-9a-f-]{36}) started/.exec(started.stdout)![1]!;
    const logs = pulse("logs", id, "--follow");
    expect(logs.code, logs.stderr).toBe(0);
    expect(logs.stdout).toMatch(/── iteration 1\/10 · complete · CONTINUE[^\n]*\nWrote a\.js\. <signal>CONTINUE<\/signal>\n── iteration 2\/10 · complete · COMPLETE/);
    expect(logs.stdout).toMatch(/complete after 2 iterations: 1 commit/);
  }, 30_000);

  it("refuses an in-place session on a repository another session works in place (exit 2, no record), and takes one in its own worktree", async () => {
    const { script, pulse } = setup([{ outcome: "hang" }]);
    const first = pulse("start", "--goal", "first", "--driver", "scripted", "--script", script, "--in-place", "--detach");
    expect(first.code, first.stderr).toBe(0);
    const id = /session ([0-9a-f-]{36}) started in the background/.exec(first.stdout)![1]!;
    await until(() => (json(pulse("status", id, "--json")).iterations[0]?.status === "running" ? true : undefined));
    const second = pulse("start", "--goal", "second", "--driver", "scripted", "--script", script, "--in-place");
    expect(second.code).toBe(2);
    expect(second.stderr).toMatch(/^pulse session: --repo: another session works in .* in place: .*\n$/);
    expect(json(pulse("list", "--json"))).toHaveLength(1);
    // Near miss: a session in its own worktree works beside it.
    const beside = pulse("start", "--goal", "beside", "--driver", "scripted", "--script", script, "--detach");
    expect(beside.code, beside.stderr).toBe(0);
    expect(json(pulse("list", "--json"))).toHaveLength(2);
    for (const s of json(pulse("list", "--json"))) expect(pulse("abort", s.id).code).toBe(0);
  }, 60_000);

  it("aborts a detached session at once, even before its runner has started it", async () => {
    const { script, pulse } = setup([{ outcome: "hang" }]);
    const started = pulse("start", "--goal", "never mind", "--driver", "scripted", "--script", script, "--detach");
    expect(started.code, started.stderr).toBe(0);
    const id = /session ([0-9a-f-]{36}) started in the background/.exec(started.stdout)![1]!;
    expect(pulse("abort", id, "--no-wait").code).toBe(0);
    const s = await until(() => {
      const x = json(pulse("status", id, "--json")).session;
      return x.status === "aborted" ? x : undefined;
    });
    expect(s).toMatchObject({ status: "aborted", runner_pid: null });
  }, 30_000);

  it("survives a SIGKILL of its runner mid-turn: resume keeps what the agent left in a recovery commit and dispatches the turn again under the same iteration", async () => {
    const { repo, script, pulse } = setup([
      { match: { iteration: 1 }, files: { "a.js": "1\n" }, commit: "a", text: "<signal>CONTINUE</signal>" },
      // The first attempt hangs (until pulse is killed); the one dispatched again finds what the first left, and finishes.
      { match: { iteration: 2 }, shell: ["[ -e wip.js ] || sleep 50", "echo 2 > b.js"], commit: "b", text: "<signal>COMPLETE</signal>" },
    ]);
    const started = pulse("start", "--goal", "crash me", "--driver", "scripted", "--script", script, "--detach");
    const id = /session ([0-9a-f-]{36}) started/.exec(started.stdout)![1]!;
    const running = await until(() => {
      const d = json(pulse("status", id, "--json"));
      return d.iterations[1]?.status === "running" ? d : undefined;
    });
    writeFileSync(join(running.session.worktree_path, "wip.js"), "// work in progress\n");
    process.kill(running.session.runner_pid, "SIGKILL");
    await until(() => (json(pulse("status", id, "--json")).live === false ? true : undefined));
    // Never shown running with no runner behind it: interrupted, with how to go on.
    const dead = json(pulse("status", id, "--json"));
    expect(dead.session.status).toBe("interrupted");
    expect(dead.session.status_reason).toMatch(/stopped while it ran: pulse session resume/);
    expect(pulse("list", "--status", "interrupted").stdout).toContain(id.slice(0, 8));
    expect(pulse("list", "--status", "running").stdout).not.toContain(id.slice(0, 8));
    const resumed = pulse("resume", id);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toMatch(/iteration 2 was interrupted during its agent's turn when its runner stopped; what the agent left is in recovery commit [0-9a-f]{8}; the turn is dispatched again as iteration 2 \(build_context not run again\)/);
    const d = json(pulse("status", id, "--json"));
    expect(d.session).toMatchObject({ status: "complete", current_iteration: 2, total_commits: 3 });
    expect(d.iterations.map((i: { status: string }) => i.status)).toEqual(["complete", "complete"]);
    // The iteration's evidence holds both attempts: what the first left (its recovery commit) and what the second did.
    expect(d.iterations[1].files_changed).toEqual(["b.js", "wip.js"]);
    expect(d.iterations[1].task_content).toMatch(/an earlier attempt at this iteration was interrupted when pulse stopped, and is being run again\. What it left is in commit [0-9a-f]{8}/);
    expect(gitLog(repo, `pulse/session/${id.slice(0, 8)}`)).toEqual(["b", `[RECOVERY] session ${id}: work left by iteration 2, interrupted; its turn is dispatched again`, "a", "initial"]);
  }, 60_000);
});
