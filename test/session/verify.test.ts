/**
 * Done means verified, with real checks in real repositories: the baseline is taken before the
 * first turn; a COMPLETE that breaks a passing check is rejected and the next turn is told why;
 * a check that already failed does not block, unless the agent adds a failure to it; after the
 * rejections allowed the agent may end the session blocked with what it could not resolve (never
 * complete); every iteration leaves a commit.
 */
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Script } from "../../adapters/agents/scripted/script.js";
import { gitLog, gitRepo, harness, newSession, removeDir } from "./helpers.js";

const repos: string[] = [];
afterAll(() => repos.forEach(removeDir));

/** A repository whose check.sh fails (naming each failure) for every file in `failing/`. */
function repoWithCheck(legacyFailure = false): string {
  const repo = gitRepo();
  repos.push(repo);
  writeFileSync(join(repo, "check.sh"), `#!/bin/sh\nstatus=0\n${legacyFailure ? 'echo "FAIL legacy.test.js > parses dates (12 ms)"; status=1\n' : ""}for f in failing/*; do [ -e "$f" ] || continue; echo "FAIL $f at line $$"; status=1; done\nexit $status\n`);
  execFileSync("git", ["add", "-A"], { cwd: repo });
  execFileSync("git", ["commit", "-q", "-m", "check"], { cwd: repo });
  return repo;
}

const verify = { checks: ["sh check.sh"], each: false };

describe("done means verified", () => {
  it("rejects a COMPLETE that breaks a passing check, tells the next turn, and accepts it once fixed", async () => {
    const repo = repoWithCheck();
    const script: Script = {
      steps: [
        { match: { iteration: 1 }, files: { "failing/parser.test.js": "x" }, commit: "feat: parser", text: "All done. <signal>COMPLETE</signal>" },
        { match: { iteration: 2 }, files: { "failing/parser.test.js": null }, commit: "fix: parser", text: "Fixed. <signal>COMPLETE</signal>" },
      ],
    };
    const h = await harness(script);
    const id = await newSession(h.records, repo, { verify });
    const final = await h.runner.run(id);
    expect(final).toMatchObject({ status: "complete", current_iteration: 2 });
    expect(final.verify?.baseline).toEqual([{ command: "sh check.sh", exit: 0, failures: [] }]);
    const [first, second] = await h.records.iterations(id);
    expect(first).toMatchObject({ status: "rejected", signal: "COMPLETE" });
    expect(first!.gate).toMatchObject({ passed: false, checks: [{ command: "sh check.sh", exit: 1, newFailures: ["FAIL failing/parser.test.js at line N"] }] });
    expect(first!.error).toMatch(/COMPLETE rejected/);
    expect(second!.task_content).toMatch(/Your COMPLETE was not accepted[\s\S]*FAIL failing\/parser\.test\.js at line N/);
    expect(second).toMatchObject({ status: "complete", gate: { passed: true } });
  });

  it("does not hold a failure the baseline already had against the agent, but does hold a new one", async () => {
    const repo = repoWithCheck(true);
    const h = await harness({ steps: [{ files: { "a.txt": "a\n" }, commit: "feat: a", text: "<signal>COMPLETE</signal>" }] });
    const id = await newSession(h.records, repo, { verify });
    const done = await h.runner.run(id);
    expect(done.status).toBe("complete");
    expect(done.verify?.baseline?.[0]).toMatchObject({ exit: 1, failures: ["FAIL legacy.test.js > parses dates (<time>)"] });

    // Near miss: the same already-failing check gains a failure of the agent's making.
    const repo2 = repoWithCheck(true);
    const h2 = await harness({ mode: "repeat-last", steps: [{ files: { "failing/new.test.js": "x" }, commit: "feat: new", text: "<signal>COMPLETE</signal>" }] });
    const id2 = await newSession(h2.records, repo2, { verify, max_iterations: 1 });
    await h2.runner.run(id2);
    const [it1] = await h2.records.iterations(id2);
    expect(it1).toMatchObject({ status: "rejected", gate: { checks: [{ newFailures: ["FAIL failing/new.test.js at line N"] }] } });
  });

  it("after the rejections allowed, a COMPLETE ends the session blocked with what the agent could not resolve, never complete", async () => {
    const repo = repoWithCheck();
    const h = await harness({ mode: "repeat-last", steps: [{ files: { "failing/flaky.test.js": "x" }, text: "Done. <unresolved>the flaky network test needs a proxy</unresolved> <signal>COMPLETE</signal>" }] });
    const id = await newSession(h.records, repo, { verify });
    const final = await h.runner.run(id);
    expect(final).toMatchObject({ status: "blocked", current_iteration: 3 });
    expect(final.status_reason).toMatch(/unresolved issues .*the flaky network test needs a proxy/);
    const its = await h.records.iterations(id);
    expect(its.map((i) => i.status)).toEqual(["rejected", "rejected", "complete"]);
    expect(its[2]!.task_content).toMatch(/<unresolved>/);
  });

  it("leaves a commit for every iteration, what the agent did not commit committed on its branch with trailers", async () => {
    const repo = repoWithCheck();
    const h = await harness({ steps: [{ match: { iteration: 1 }, files: { "notes.md": "wip\n" }, text: "Drafted the notes. <signal>CONTINUE</signal>" }, { match: { iteration: 2 }, text: "<signal>COMPLETE</signal>" }] });
    const id = await newSession(h.records, repo, { verify: { checks: ["sh check.sh"], each: true } });
    await h.runner.run(id);
    const [first] = await h.records.iterations(id);
    expect(first!.commit_hash).not.toBeNull();
    expect(first!.gate).toMatchObject({ passed: true });
    expect(gitLog(repo)[0]).toBe("chore(pulse): iteration 1: Drafted the notes.");
    const body = execFileSync("git", ["log", "-1", "--format=%B", first!.commit_hash!], { cwd: repo, encoding: "utf8" });
    expect(body).toMatch(new RegExp(`Pulse-Session: ${id}\\nPulse-Iteration: 1`));
    expect(execFileSync("git", ["status", "--porcelain"], { cwd: repo, encoding: "utf8" })).toBe("");
  });

  it("runs the checks with the environment allowlist, never pulse's secrets", async () => {
    const repo = repoWithCheck();
    const out = join(repo, ".git", "check-env.txt");
    process.env.AWS_SECRET_ACCESS_KEY = "aws-secret-for-the-check";
    try {
      const h = await harness({ steps: [{ text: "<signal>COMPLETE</signal>" }] });
      const id = await newSession(h.records, repo, { verify: { checks: [`env > '${out}'`], each: false } });
      expect((await h.runner.run(id)).status).toBe("complete");
    } finally {
      delete process.env.AWS_SECRET_ACCESS_KEY;
    }
    const env = readFileSync(out, "utf8");
    expect(env).not.toContain("aws-secret-for-the-check");
    expect(env).toMatch(/^PATH=/m);
    expect(env).toMatch(/^CI=true$/m);
  });
});
