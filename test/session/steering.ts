/**
 * What the session tests of several stores share: waiting for a condition, and the scenario of a
 * detached session steered from other processes (paused after its iteration, resumed, aborted
 * with a recovery commit), which must hold on every store alike.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import type { runBin } from "../cli/run-bin.js";
import { gitLog, gitRepo } from "./helpers.js";

/** Polls `check` until it returns something, or fails after `ms`. */
export async function until<T>(check: () => T | undefined | Promise<T | undefined>, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 100));
  }
}

export const json = (r: { stdout: string }) => JSON.parse(r.stdout);

type Pulse = (...args: string[]) => ReturnType<typeof runBin>;

/** Iteration 1 waits for a go-ahead outside the repository (so a pause surely arrives during it); iteration 2 hangs. */
export function steeredSteps(dirs: string[]): { steps: unknown[]; go: string } {
  const go = join(gitRepo(), "go");
  dirs.push(join(go, ".."));
  return {
    go,
    steps: [
      { match: { iteration: 1 }, shell: [`while [ ! -f '${go}' ]; do sleep 0.05; done`], files: { "a.js": "1\n" }, commit: "a", text: "<signal>CONTINUE</signal>" },
      { match: { iteration: 2 }, outcome: "hang" },
    ],
  };
}

/**
 * Starts the session detached, pauses it from another process during iteration 1, resumes it,
 * and aborts it during iteration 2 with work left in its worktree. `whilePauseRequested` sees the
 * request before the runner acts on it.
 */
export async function steerFromOtherProcesses(o: { repo: string; script: string; go: string; pulse: Pulse; whilePauseRequested?: (id: string) => Promise<void> }): Promise<{ id: string; worktree: string }> {
  const { repo, script, go, pulse } = o;
  const started = pulse("start", "--goal", "steer me", "--driver", "scripted", "--script", script, "--detach");
  expect(started.code, started.stderr).toBe(0);
  const id = /session ([0-9a-f-]{36}) started in the background/.exec(started.stdout)![1]!;
  await until(() => (json(pulse("status", id, "--json")).iterations[0]?.status === "running" ? true : undefined));
  const paused = pulse("pause", id);
  expect(paused.code, paused.stderr).toBe(0);
  expect(paused.stdout).toMatch(/pause requested; the runner \(process \d+\) pauses after the current iteration/);
  await o.whilePauseRequested?.(id);
  writeFileSync(go, "");
  const s1 = await until(() => {
    const s = json(pulse("status", id, "--json")).session;
    return s.status === "paused" ? s : undefined;
  });
  expect(s1).toMatchObject({ current_iteration: 1, total_commits: 1, control: null, runner_pid: null });

  expect(pulse("resume", id, "--detach").code).toBe(0);
  await until(() => (json(pulse("status", id, "--json")).iterations[1]?.status === "running" ? true : undefined));
  const worktree = json(pulse("status", id, "--json")).session.worktree_path as string;
  writeFileSync(join(worktree, "half.js"), "// unfinished\n");
  const aborted = pulse("abort", id);
  expect(aborted.code, aborted.stderr).toBe(0);
  expect(aborted.stdout).toMatch(/aborted after 2 iterations: 2 commits/);
  expect(aborted.stdout).toMatch(/unfinished work kept in recovery commit [0-9a-f]{8}/);
  expect(gitLog(repo, `pulse/session/${id.slice(0, 8)}`)[0]).toBe(`[RECOVERY] session ${id} aborted during iteration 2`);
  return { id, worktree };
}
