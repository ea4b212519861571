/**
 * Liveness as the reaper, `resume` and the records read it: a zombie (exited, not yet collected by
 * its parent, or by an init that collects orphans late, as a container's PID 1 may) runs nothing
 * and is not alive; the process that holds it, and a group with one live member, are. The zombies
 * here are made deterministic (test/helpers/zombie.ts).
 */
import type { ChildProcess } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { groupAlive, pidAlive, procStart } from "../../src/coding/liveness.js";
import { displayedStatus } from "../../src/coding/run-records.js";
import { stat, zombieUnder as made } from "../helpers/zombie.js";

const children: ChildProcess[] = [];
async function zombieUnder(ownGroup: boolean) {
  const z = await made(ownGroup);
  children.push(z.holder);
  return z;
}
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
});

describe("liveness", () => {
  it("a zombie is not alive; the process holding it is, and so is its start time readable", async () => {
    const { holder, zombie } = await zombieUnder(false);
    expect(pidAlive(zombie)).toBe(false);
    expect(pidAlive(holder.pid!)).toBe(true);
    expect(procStart(holder.pid!)).toBeGreaterThan(0);
    // The group holds the live sleep and the zombie: alive, for the live one.
    expect(groupAlive(holder.pid!)).toBe(true);
  });

  it("a group whose only member is a zombie is not alive; once its holder is killed, neither is the holder's", async () => {
    const { holder, zombie } = await zombieUnder(true);
    expect(groupAlive(zombie)).toBe(false);
    expect(groupAlive(holder.pid!)).toBe(true);
    holder.kill("SIGKILL");
    await new Promise((r) => holder.once("exit", r));
    expect(pidAlive(holder.pid!)).toBe(false);
    expect(groupAlive(holder.pid!)).toBe(false);
    // Orphaned now, the zombie waits for init, which may be slow to collect it: still not alive.
    expect(pidAlive(zombie)).toBe(false);
  });

  it("a pid nobody has (above the kernel's largest) is neither alive nor a group; this process and its group are alive", () => {
    expect(pidAlive(2 ** 22 + 1)).toBe(false);
    expect(groupAlive(2 ** 22 + 1)).toBe(false);
    expect(pidAlive(process.pid)).toBe(true);
    expect(groupAlive(Number(stat(process.pid)[2]))).toBe(true);
  });

  it("a run whose runner is a zombie is shown interrupted, in every loop's listing; one whose runner runs is shown running", async () => {
    const { holder, zombie } = await zombieUnder(false);
    expect(displayedStatus("running", zombie)).toBe("interrupted");
    expect(displayedStatus("running", holder.pid!)).toBe("running");
    expect(displayedStatus("succeeded", zombie)).toBe("succeeded");
  });
});
