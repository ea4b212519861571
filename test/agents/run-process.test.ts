/**
 * The spawner every agent and action process goes through, on real processes: a process that
 * ignores SIGTERM is sent SIGTERM first and SIGKILL after the grace, group and all; one that obeys
 * SIGTERM is not waited on for the grace.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runProcess } from "../../adapters/agents/cli/run-process.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function alive(pid: number): boolean {
  try {
    const state = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.[0];
    return state !== undefined && state !== "Z";
  } catch {
    return false;
  }
}

async function goneWithin(pids: number[], ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (pids.every((p) => !alive(p))) return true;
    await new Promise((r) => setTimeout(r, 25));
  }
  return pids.every((p) => !alive(p));
}

function run(script: string, killGraceMs: number) {
  const dir = mkdtempSync(join(tmpdir(), "pulse-run-process-"));
  dirs.push(dir);
  const outcome = runProcess({ command: "sh", args: ["-c", script], cwd: dir, env: { PATH: process.env.PATH ?? "/usr/bin:/bin" }, timeoutMs: 300, killGraceMs });
  return { dir, outcome };
}

describe("runProcess: SIGTERM, then SIGKILL after the grace", () => {
  it("a process and its child that ignore SIGTERM get SIGTERM first, then SIGKILL once the grace is over", async () => {
    // Both note the SIGTERM they ignore; the child is the one a group kill must not miss.
    const { dir, outcome } = run(`trap 'echo term >> terms' TERM; (trap 'echo child-term >> terms' TERM; sh -c 'echo $PPID > child.pid'; while :; do sleep 0.05; done) & echo $$ > parent.pid; while :; do sleep 0.05; done`, 700);
    const r = await outcome;
    expect(r.reason).toBe("timeout");
    // (Sent to the group and to each process, a signal may be noted twice.)
    const terms = [...new Set(readFileSync(join(dir, "terms"), "utf8").trim().split("\n"))].sort();
    expect(terms).toEqual(["child-term", "term"]);
    // The parent outlived the SIGTERM by the grace: what ended it was the SIGKILL.
    expect(r.durationMs).toBeGreaterThanOrEqual(300 + 600);
    const pids = ["parent.pid", "child.pid"].map((f) => Number(readFileSync(join(dir, f), "utf8")));
    expect(await goneWithin(pids, 3_000)).toBe(true);
  });

  it("near miss: a process that obeys SIGTERM ends at once, long before the grace", async () => {
    const { outcome } = run("echo $$ > pid; exec sleep 30", 10_000);
    const r = await outcome;
    expect(r.reason).toBe("timeout");
    expect(r.signal).toBe("SIGTERM");
    expect(r.durationMs).toBeLessThan(5_000);
  });
});
