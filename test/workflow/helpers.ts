/**
 * The workflow tests' world: a tiny Node project in a real git repository whose `node --test`
 * fails until a pulse fixes `add`, scripts for the scripted driver written to files, and the
 * built `pulse` bin run with its own store and worktree folder.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll } from "vitest";
import { removeDir } from "../session/helpers.js";
import { ROOT, runBin } from "../cli/run-bin.js";

export const BROKEN_ADD = "export const add = (a, b) => a - b;\n";
export const FIXED_ADD = "export const add = (a, b) => a + b;\n";
const MATH_TEST = "import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { add } from '../src/math.js';\n\ntest('add adds', () => assert.equal(add(2, 2), 4));\n";
export const LEGACY_TEST = "import { test } from 'node:test';\nimport assert from 'node:assert/strict';\n\ntest('legacy clock is right', () => assert.equal(1, 2));\n";

export interface World {
  repo: string;
  store: string;
  worktrees: string;
  env: Record<string, string>;
  dir: string;
}

/** A fresh world per test: repository (main, one commit, `node --test` failing), store and worktree folder. */
export function worlds(): (o?: { legacy?: boolean; untracked?: boolean }) => World {
  const made: string[] = [];
  afterAll(() => made.splice(0).forEach(removeDir));
  return (o = {}) => {
    const dir = mkdtempSync(join(tmpdir(), "pulse-workflow-"));
    made.push(dir);
    const repo = join(dir, "repo");
    mkdirSync(join(repo, "src"), { recursive: true });
    mkdirSync(join(repo, "test"));
    const g = (...args: string[]) => execFileSync("git", args, { cwd: repo, stdio: "pipe" });
    g("init", "-q", "-b", "main");
    g("config", "user.email", "dev@example.org");
    g("config", "user.name", "Dev");
    writeFileSync(join(repo, "package.json"), '{ "type": "module" }\n');
    writeFileSync(join(repo, "src/math.js"), BROKEN_ADD);
    writeFileSync(join(repo, "test/math.test.js"), MATH_TEST);
    if (o.legacy) writeFileSync(join(repo, "test/legacy.test.js"), LEGACY_TEST);
    g("add", "-A");
    g("commit", "-q", "-m", "initial");
    // The user's own uncommitted and untracked work, which no workflow may touch.
    writeFileSync(join(repo, "src/math.js"), `${BROKEN_ADD}// the user's edit in progress\n`);
    if (o.untracked !== false) writeFileSync(join(repo, "notes.txt"), "my notes\n");
    const worktrees = join(dir, "worktrees");
    const store = join(dir, "pulse.db");
    return { repo, store, worktrees, dir, env: { PULSE_WORKTREES: worktrees, HOME: dir } };
  };
}

export function git(repo: string, ...args: string[]): string {
  return execFileSync("git", args, { cwd: repo, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();
}

/** Every file of the checkout (.git's HEAD, index and refs too) with its content: what "byte-identical" compares. */
export function snapshot(repo: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      const rel = path.slice(repo.length + 1);
      if (rel === ".git/objects" || rel === ".git/logs" || rel === ".git/worktrees" || rel.startsWith(".git/refs/heads/pulse") || rel === ".git/pulse-locks") continue;
      if (statSync(path).isDirectory()) walk(path);
      else out[rel] = readFileSync(path, "base64");
    }
  };
  walk(repo);
  // Refs a workflow adds (its branch, packed or loose) are its own; the user's are compared.
  if (out[".git/packed-refs"]) delete out[".git/packed-refs"];
  return out;
}

export function writeFile(w: World, name: string, content: string): string {
  const path = join(w.dir, name);
  writeFileSync(path, content);
  return path;
}

export function writeScript(w: World, steps: unknown[], name = "script.json"): string {
  return writeFile(w, name, JSON.stringify({ steps }));
}

export const PREFLIGHT = (extra: Record<string, unknown> = {}) => ({
  match: { phase: "preflight" },
  toolCalls: [{ name: "preflight_done", arguments: { summary: "nothing to install", buildSuccess: true, verificationCommands: ["node --test"], ...extra } }],
});

/** A pulse turn: files written, then pulse_done with the summary (or a raw tool call list). */
export function turn(iteration: number, files: Record<string, string | null>, summary: string | null, more: Record<string, unknown> = {}) {
  return { match: { phase: "run_pulse", iteration }, files, ...(summary !== null ? { toolCalls: [{ name: "pulse_done", arguments: { summary, ...more } }] } : {}) };
}

export function pulse(w: World, args: string[], timeoutMs = 90_000) {
  return runBin("pulse", [...args, "--store", w.store], { env: w.env, timeoutMs });
}

export function start(w: World, plan: string, script: string, extra: string[] = []) {
  return pulse(w, ["workflow", "start", "--plan", plan, "--driver", "scripted", "--script", script, "--repo", w.repo, "--base", "main", ...extra]);
}

/** `pulse workflow start` as a child process that can be stopped or killed, and the id it prints. */
export function startAsync(w: World, plan: string, script: string): { child: ChildProcess; id: Promise<string>; exited: Promise<{ code: number | null; signal: string | null; stderr: string }> } {
  const child = spawn(process.execPath, [resolve(ROOT, "dist/bin/pulse.mjs"), "workflow", "start", "--plan", plan, "--driver", "scripted", "--script", script, "--repo", w.repo, "--base", "main", "--store", w.store], { cwd: w.dir, env: { PATH: process.env.PATH ?? "", ...w.env }, stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  let resolveId: (id: string) => void;
  const id = new Promise<string>((r) => (resolveId = r));
  child.stderr!.on("data", (d: Buffer) => {
    stderr += d.toString();
    const m = /^workflow ([0-9a-f-]{36}):/m.exec(stderr);
    if (m) resolveId(m[1]!);
  });
  child.stdout!.resume();
  const exited = new Promise<{ code: number | null; signal: string | null; stderr: string }>((r) => child.on("exit", (code, signal) => r({ code, signal, stderr })));
  return { child, id, exited };
}

export async function until(what: string, check: () => boolean, timeoutMs = 30_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export function statusJson(w: World, id: string) {
  const r = pulse(w, ["workflow", "status", id, "--json"]);
  if (r.code !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout) as { workflow: { status: string; reason: string; worktree: string | null; branch: string }; pulses: { number: number; status: string; commit: string | null; recovery: boolean; branch: string | null; turns: number; rejections: number; gate: string | null; unresolved: unknown[]; files: string[] }[]; baselines: { commands: { command: string; exit: number }[] }; preflight: { status: string } };
}

