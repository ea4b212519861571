/** A real `pulse serve` process for the session tests: started in a directory, resolved with its URL once it prints it. */
import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { ROOT } from "../cli/run-bin.js";
import { worktreesRoot } from "./helpers.js";

const BIN = join(ROOT, "dist/bin/pulse.mjs");

export interface Served {
  child: ChildProcess;
  url: string;
  port: number;
  /** SIGTERM, then SIGKILL after 5 s (a session whose agent hangs pauses only after its turn). */
  stop(): Promise<void>;
}

export function startServe(cwd: string, args: string[], env: Record<string, string> = {}): Promise<Served> {
  const child = spawn(process.execPath, [BIN, "serve", ...args], { cwd, env: { PATH: process.env.PATH ?? "", HOME: cwd, PULSE_WORKTREES: worktreesRoot(), ...env }, stdio: ["ignore", "pipe", "pipe"] });
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (d) => {
      out += d;
      const m = /serving sessions at (http:\/\/\S+)\/api\/pulse/.exec(out);
      if (!m) return;
      const stop = () =>
        new Promise<void>((r) => {
          if (child.exitCode !== null || child.signalCode !== null) return r();
          child.once("exit", () => r());
          child.kill("SIGTERM");
          setTimeout(() => child.kill("SIGKILL"), 5_000).unref();
        });
      resolve({ child, url: m[1]!, port: Number(new URL(m[1]!).port), stop });
    });
    child.stderr!.on("data", (d) => (out += d));
    child.on("exit", (code) => reject(new Error(`pulse serve exited ${code}: ${out}`)));
  });
}
