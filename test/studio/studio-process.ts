/** A real `pulse studio` process for the studio tests, resolved with its URL and token once it prints them. */
import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { ROOT } from "../cli/run-bin.js";
import { worktreesRoot } from "../session/helpers.js";

const BIN = join(ROOT, "dist/bin/pulse.mjs");

export interface Studio {
  child: ChildProcess;
  url: string;
  port: number;
  token: string | undefined;
  /** Everything it printed so far. */
  output(): string;
  stop(): Promise<number | null>;
}

export function startStudio(cwd: string, args: string[], env: Record<string, string> = {}): Promise<Studio> {
  const child = spawn(process.execPath, [BIN, "studio", "--port", "0", ...args], { cwd, env: { PATH: process.env.PATH ?? "", HOME: cwd, PULSE_WORKTREES: worktreesRoot(), ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  return new Promise((resolve, reject) => {
    child.stdout!.on("data", (d) => {
      out += d;
      const m = /pulse studio at (http:\/\/[^/\s]+)\/(?:#token=(\S+))?/.exec(out);
      if (!m) return;
      const stop = () =>
        new Promise<number | null>((r) => {
          if (child.exitCode !== null || child.signalCode !== null) return r(child.exitCode);
          child.once("exit", (code) => r(code));
          child.kill("SIGTERM");
          setTimeout(() => child.kill("SIGKILL"), 8_000).unref();
        });
      resolve({ child, url: m[1]!, port: Number(new URL(m[1]!).port), token: m[2] === undefined ? undefined : decodeURIComponent(m[2]), output: () => out, stop });
    });
    child.stderr!.on("data", (d) => (out += d));
    child.on("exit", (code) => reject(new Error(`pulse studio exited ${code}: ${out}`)));
  });
}
