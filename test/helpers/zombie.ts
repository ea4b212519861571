/**
 * A zombie made deterministic: `bash` starts a child that exits at once, then `exec sleep`
 * replaces it, and sleep never collects the child. What a dead pulse is, for the pulse that
 * reads its record, under an init that collects orphans late or never (a container's PID 1).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";

/** The fields of /proc/<pid>/stat after the command name: the state first, the group third. */
export function stat(pid: number): string[] {
  const text = readFileSync(`/proc/${pid}/stat`, "utf8");
  return text.slice(text.lastIndexOf(")") + 2).split(" ");
}

/** A live `sleep` (the holder, its own group) and its exited child; `ownGroup` gives the child a group of its own (job control). The caller kills the holder. */
export async function zombieUnder(ownGroup: boolean): Promise<{ holder: ChildProcess; zombie: number }> {
  const holder = spawn("bash", ["-c", `${ownGroup ? "set -m; " : ""}sleep 0 & echo $!; exec sleep 60`], { detached: true, stdio: ["ignore", "pipe", "ignore"] });
  const zombie = await new Promise<number>((resolve, reject) => {
    holder.once("error", reject);
    holder.stdout!.once("data", (d: Buffer) => resolve(Number(String(d).trim())));
  });
  const end = Date.now() + 10_000;
  while (stat(zombie)[0] !== "Z") {
    if (Date.now() > end) {
      holder.kill("SIGKILL");
      throw new Error(`process ${zombie} never exited`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  return { holder, zombie };
}
