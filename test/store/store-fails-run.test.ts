/**
 * A store that fails under a real `pulse run` (docs/store.md, "When the file is not usable"): a
 * disk that fills mid-run (SQLite's own SQLITE_FULL, the file's growth capped by max_page_count in
 * the run's process) stops the loops, is said in one line and exits 1, and the iteration it
 * failed is not counted as done; a file locked by another process beyond the busy timeout pauses
 * the loops, is said once, and the run goes on once the lock is gone.
 */
import { spawn } from "node:child_process";
import { rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openDatabase } from "../../adapters/sqlite/driver.js";
import { ROOT } from "../cli/run-bin.js";
import { tempDir } from "./stores.js";

const FILLS = resolve(import.meta.dirname, "fixtures/store-fills.cjs");
const PULSE = resolve(ROOT, "dist/bin/pulse.mjs");

let dir = "";
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = "";
});

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** A real `pulse run` of the shipped examples on `store`; `onLine` sees each line of its trace. */
function pulseRun(args: string[], env: Record<string, string> = {}, onLine?: (line: string) => void): Promise<Run> {
  return new Promise((done) => {
    const began = Date.now();
    const child = spawn(process.execPath, [...(env.PULSE_TEST_FREE_PAGES ? ["--require", FILLS] : []), PULSE, "run", "manifests/examples", ...args], { cwd: ROOT, env: { PATH: process.env.PATH ?? "", ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => {
      const text = d.toString();
      stdout += text;
      for (const l of text.split("\n")) if (l) onLine?.(l);
    });
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("exit", (code) => done({ code, stdout, stderr, ms: Date.now() - began }));
  });
}

describe("a store that fails during pulse run", () => {
  it("a disk that fills stops the loops: one line, exit 1, the failed iteration not counted as done", async () => {
    dir = tempDir();
    const path = join(dir, "pulse.db");
    // Before the fix: an iteration into the same failure every 2 s until --duration, said each time, exit 0.
    const r = await pulseRun(["--duration", "40s", "--store", `sqlite:${path}`], { PULSE_TEST_FREE_PAGES: "30" });
    expect(r.code, r.stderr + r.stdout).toBe(1);
    const said = `${r.stdout}${r.stderr}`.split("\n").filter((l) => l.includes("the disk is full"));
    expect(said).toEqual([`pulse run: ${path}: the disk is full; what was committed before is kept, free some space and run again: the loops are stopped`]);
    expect(r.stdout).toMatch(/ failed .*STORE_FULL\n/);
    expect(r.stdout).toMatch(/; stopped: the store failed\n$/);
    expect(r.ms).toBeLessThan(30_000);
    // What the journal holds: the iteration the store failed did not finish (a restart resumes it).
    const db = openDatabase(path, { readonly: true });
    const completed = (db.prepare("SELECT count(*) AS n FROM iterations WHERE status = 'completed'").get() as { n: number }).n;
    const running = (db.prepare("SELECT count(*) AS n FROM iterations WHERE status = 'running'").get() as { n: number }).n;
    db.close();
    expect(completed).toBe((r.stdout.match(/ (closed|done) {2}\d+ms/g) ?? []).length);
    expect(running).toBeLessThanOrEqual(1);
    expect(completed).toBeGreaterThan(0);
  }, 60_000);

  it("the near miss: room enough, the same run goes on to --duration and exits 0", async () => {
    dir = tempDir();
    const r = await pulseRun(["--duration", "3s", "--store", `sqlite:${join(dir, "pulse.db")}`], { PULSE_TEST_FREE_PAGES: "100000" });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe("");
    expect(r.stdout).toMatch(/; stopped after --duration\n$/);
  }, 60_000);

  it("a file locked beyond the busy timeout pauses the loops, says so once, and the run goes on when it is free", async () => {
    dir = tempDir();
    const path = join(dir, "pulse.db");
    let holder: ReturnType<typeof openDatabase> | undefined;
    let locked = false;
    const release = () => {
      if (!holder?.open) return;
      holder.exec("COMMIT");
      holder.close();
    };
    const r = await pulseRun(["--duration", "30s", "--store", `sqlite:${path}`], {}, (line) => {
      // An iteration met the lock (beyond the 5 s busy timeout): the other process lets go soon after.
      if (locked && /STORE_LOCKED/.test(line)) setTimeout(release, 500);
      // Once the kickoffs committed, another process takes the write lock (at most 20 s).
      if (locked || !/examples\.hello .*#1 \(kickoff\)/.test(line)) return;
      locked = true;
      holder = openDatabase(path);
      holder.exec("BEGIN IMMEDIATE");
      setTimeout(release, 20_000);
    });
    expect(locked).toBe(true);
    expect(r.code, r.stderr + r.stdout).toBe(0);
    expect(r.stderr.trim().split("\n")).toEqual([expect.stringMatching(/^pulse run: .*pulse\.db: the store is locked by another process \(waited 5s\); .*: the loops are paused and try again every 10s$/)]);
    expect(r.stdout).toMatch(/the store answers again: the loops go on\n/);
    // After the lock: examples.hello iterates and commits again.
    const after = r.stdout.slice(r.stdout.indexOf("the store answers again"));
    expect(after).toMatch(/examples\.hello +#\d+ \(periodic\).* closed/);
  }, 60_000);
});
