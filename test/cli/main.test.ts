import { describe, expect, it } from "vitest";
import { Command } from "commander";
import { runProgram, setExitCode } from "../../src/cli/main.js";
import { UsageError } from "../../src/cli/exit-codes.js";
import type { CliIO } from "../../src/cli/io.js";
import { useColor } from "../../src/cli/io.js";

function io(env: Record<string, string> = {}, tty = false) {
  const out: string[] = [];
  const err: string[] = [];
  const value: CliIO = { stdout: (t) => void out.push(t), stderr: (t) => void err.push(t), readStdin: async () => new Uint8Array(), env, stdoutIsTTY: tty, cwd: "/" };
  return { io: value, out, err };
}

const program = (action: () => void | Promise<void>) => new Command("t").action(action);

describe("runProgram", () => {
  it("maps an unexpected exception to exit 3 without a stack trace", async () => {
    const { io: x, err } = io();
    const code = await runProgram(program(() => { throw new TypeError("boom"); }), [], x, "t");
    expect(code).toBe(3);
    expect(err.join("")).toBe("t: internal error: boom\n  (set PULSE_DEBUG=1 for the stack trace, and please report it)\n");
  });

  it("shows the stack trace only under PULSE_DEBUG", async () => {
    const { io: x, err } = io({ PULSE_DEBUG: "1" });
    await runProgram(program(() => { throw new Error("boom"); }), [], x, "t");
    expect(err.join("")).toMatch(/\n\s+at /);
  });

  it("maps a UsageError to exit 2 with one line", async () => {
    const { io: x, err } = io();
    expect(await runProgram(program(() => { throw new UsageError("no file"); }), [], x, "t")).toBe(2);
    expect(err).toEqual(["t: no file\n"]);
  });

  it("returns the exit code a command records", async () => {
    const { io: x } = io();
    const p = new Command("t");
    p.action(() => setExitCode(p, 1));
    expect(await runProgram(p, [], x, "t")).toBe(1);
  });
});

describe("useColor", () => {
  it("follows NO_COLOR, FORCE_COLOR, the flag and the terminal", () => {
    expect(useColor(io({}, true).io, undefined)).toBe(true);
    expect(useColor(io({}, false).io, undefined)).toBe(false);
    expect(useColor(io({ NO_COLOR: "1" }, true).io, true)).toBe(false);
    expect(useColor(io({ NO_COLOR: "" }, true).io, undefined)).toBe(true);
    expect(useColor(io({ FORCE_COLOR: "1" }, false).io, undefined)).toBe(true);
    expect(useColor(io({}, true).io, false)).toBe(false);
    expect(useColor(io({ TERM: "dumb" }, true).io, undefined)).toBe(false);
  });
});
