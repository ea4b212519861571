/** Temporary real git repositories and an in-process session runner for the session tests. */
import { runChecks } from "../../adapters/agents/cli/checks.js";
import { afterAll } from "vitest";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MemorySessionRecords } from "../../adapters/memory/session-records.js";
import { ScriptedDriver } from "../../adapters/agents/scripted/scripted-driver.js";
import type { Script } from "../../adapters/agents/scripted/script.js";
import { createRuntime } from "../../src/embedded.js";
import { Notifier, type Notification } from "../../src/coding/notifier.js";
import { loadSessionProfile, type SessionProfile } from "../../src/coding/session/profile.js";
import type { SessionRecords } from "../../src/coding/session/records.js";
import { SessionRunner } from "../../src/coding/session/runner.js";

export function gitRepo(): string {
  const dir = mkdtempSync(join(tmpdir(), "pulse-session-repo-"));
  const g = (...args: string[]) => execFileSync("git", args, { cwd: dir, stdio: "pipe" });
  g("init", "-q", "-b", "main");
  g("config", "user.email", "dev@example.org");
  g("config", "user.name", "Dev");
  writeFileSync(join(dir, "README.md"), "# app\n");
  g("add", "-A");
  g("commit", "-q", "-m", "initial");
  return dir;
}

export function gitLog(repo: string, ref = "HEAD"): string[] {
  return execFileSync("git", ["log", "--format=%s", ref], { cwd: repo, encoding: "utf8" }).trim().split("\n");
}

let worktrees: string | undefined;

/** One directory for the session worktrees of this test process ($PULSE_WORKTREES of the bins it runs), removed at exit. */
export function worktreesRoot(): string {
  if (!worktrees) {
    const dir = (worktrees = mkdtempSync(join(tmpdir(), "pulse-worktrees-")));
    process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
  }
  return worktrees;
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

export interface Harness {
  runner: SessionRunner;
  records: SessionRecords;
  driver: ScriptedDriver;
  notes: Notification[];
  notifier: Notifier;
}

export async function harness(script: Script, options: { records?: SessionRecords; profile?: Partial<SessionProfile> } = {}): Promise<Harness> {
  const records = options.records ?? new MemorySessionRecords();
  const driver = new ScriptedDriver(script);
  const notes: Notification[] = [];
  const notifier = new Notifier([{ name: "test", send: async (n) => void notes.push(n) }]);
  const profile = { ...loadSessionProfile(), ...options.profile };
  const runner = await SessionRunner.create({ runtime: await createRuntime(), records, profile, driverFor: () => driver, notifier, checks: (commands, o) => runChecks(commands, { ...o, parentEnv: process.env }) });
  return { runner, records, driver, notes, notifier };
}

export async function newSession(records: SessionRecords, repo: string, extra: Record<string, unknown> = {}): Promise<string> {
  const id = crypto.randomUUID();
  await records.create({ id, project_name: "app", goal: "Add a greeting module with tests", max_iterations: 10, repo_path: repo, driver: { name: "scripted" }, context_strategy: "prefetch", created_by: "cli", ...extra });
  return id;
}

/** A maker of real git repositories, each removed when the test file ends. */
export function tempRepos(): () => string {
  const made: string[] = [];
  afterAll(() => made.splice(0).forEach(removeDir));
  return () => {
    const r = gitRepo();
    made.push(r);
    return r;
  };
}
