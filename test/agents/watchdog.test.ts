/**
 * The parent-death watchdog (adapters/agents/cli/watchdog.ts) on its own: when the pulse that
 * started an agent is killed outright, the agent's group and every process carrying its run
 * marker, even one that left the group (`setsid`), are stopped within seconds; a process of
 * another run, or of none, is not. When the run ends normally (`release`), nothing is touched.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { groupAlive, pidAlive, procStart } from "../../src/coding/liveness.js";
import { ROOT } from "../cli/run-bin.js";

const started: number[] = [];
const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  for (const pid of started.splice(0)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone
    }
  }
});

/** A sleep in a session and group of its own (detached: setsid), optionally carrying a run marker. */
function sleeper(marker?: string): number {
  const c = spawn("sleep", ["120"], { detached: true, stdio: "ignore", env: { PATH: process.env.PATH ?? "", ...(marker ? { PULSE_AGENT_RUN: marker } : {}) } });
  c.unref();
  started.push(c.pid!);
  return c.pid!;
}

/**
 * A stand-in for pulse (the built watchdog module, in its own node process) watching the group
 * `pgid`; `release` after 200 ms when asked. Prints "watching" once the watchdog runs.
 */
async function pulseWatching(pgid: number, marker: string, release = false): Promise<ChildProcess> {
  const code = `import { startWatchdog } from ${JSON.stringify(join(ROOT, "dist/adapters/agents/cli/watchdog.js"))};
const w = startWatchdog(${pgid}, ${procStart(pgid) ?? 0}, ${JSON.stringify(marker)});
${release ? "setTimeout(() => { w.release(); setTimeout(() => process.exit(0), 200); }, 200);" : ""}
setTimeout(() => console.log("watching"), 100);
setInterval(() => {}, 1000);`;
  const holder = spawn(process.execPath, ["--input-type=module", "-e", code], { stdio: ["ignore", "pipe", "inherit"] });
  children.push(holder);
  await new Promise<void>((resolve, reject) => {
    holder.once("exit", (c) => reject(new Error(`the stand-in exited (${c}) before watching`)));
    holder.stdout!.once("data", () => resolve());
  });
  return holder;
}

async function until(check: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return check();
}

describe("the watchdog", () => {
  it("pulse SIGKILLed: the agent's group and a marked process that left it are stopped; another run's and an unmarked one are not", async () => {
    const marker = `pulse-test-${randomUUID()}`;
    const agent = sleeper(marker);
    const escaped = sleeper(marker);
    const otherRun = sleeper(`pulse-test-${randomUUID()}`);
    const unmarked = sleeper();
    const holder = await pulseWatching(agent, marker);
    holder.kill("SIGKILL");
    expect(await until(() => !groupAlive(agent) && !pidAlive(escaped), 10_000)).toBe(true);
    expect(pidAlive(otherRun)).toBe(true);
    expect(pidAlive(unmarked)).toBe(true);
  }, 30_000);

  it("near miss: released when the run ended normally, it stops nothing, even after pulse exits", async () => {
    const marker = `pulse-test-${randomUUID()}`;
    const agent = sleeper(marker);
    const escaped = sleeper(marker);
    const holder = await pulseWatching(agent, marker, true);
    await new Promise((r) => (holder.exitCode !== null ? r(null) : holder.once("exit", r)));
    await new Promise((r) => setTimeout(r, 1_000));
    expect(groupAlive(agent)).toBe(true);
    expect(pidAlive(escaped)).toBe(true);
  }, 30_000);
});
