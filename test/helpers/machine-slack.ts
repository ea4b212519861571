/**
 * How slow this machine is right now, for tests that bound how long a stop takes: a bound stated
 * for an idle machine ("within grace + 2 s") would fail under a load of 20 without anything being
 * wrong. The slack is measured in the same run, from what a stop itself does (start node, run git),
 * so a stop that really hangs (waiting out a 300 s agent) still fails by far.
 */
import { spawnSync } from "node:child_process";

/** Milliseconds to add to an idle machine's bound: four times the slowest of three node + git starts. */
export function machineSlackMs(): number {
  let slowest = 0;
  for (let i = 0; i < 3; i++) {
    const t0 = performance.now();
    spawnSync(process.execPath, ["-e", ""], { stdio: "ignore" });
    spawnSync("git", ["--version"], { stdio: "ignore" });
    slowest = Math.max(slowest, performance.now() - t0);
  }
  return Math.round(4 * slowest);
}
