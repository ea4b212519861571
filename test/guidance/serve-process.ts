/** A real `pulse guidance serve` process, resolved with its MCP URL once it prints it. */
import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { ROOT } from "../cli/run-bin.js";

export const BIN = join(ROOT, "dist/bin/pulse.mjs");

export interface Served {
  child: ChildProcess;
  url: string;
  port: number;
  output(): string;
  stop(): Promise<void>;
}

export function serveGuidance(root: string, args: string[] = [], env: Record<string, string> = {}): Promise<Served> {
  const child = spawn(process.execPath, [BIN, "guidance", "serve", "-C", root, "--port", "0", ...args], { cwd: root, env: { PATH: process.env.PATH ?? "", HOME: root, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  return new Promise((resolve, reject) => {
    let out = "";
    let done = false;
    child.stdout!.on("data", (d) => {
      out += d;
      const m = /MCP at (http:\/\/\S+\/mcp)/.exec(out);
      if (!m || done) return;
      done = true;
      const stop = () =>
        new Promise<void>((r) => {
          if (child.exitCode !== null || child.signalCode !== null) return r();
          child.once("exit", () => r());
          child.kill("SIGTERM");
          setTimeout(() => child.kill("SIGKILL"), 5_000).unref();
        });
      resolve({ child, url: m[1]!, port: Number(new URL(m[1]!).port), output: () => out, stop });
    });
    child.stderr!.on("data", (d) => (out += d));
    child.on("exit", (code) => reject(new Error(`pulse guidance serve exited ${code}: ${out}`)));
  });
}
