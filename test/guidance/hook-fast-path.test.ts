/**
 * `pulse guidance hook <event> [-C dir]` runs without loading the program's other commands
 * (claude calls it before every tool call); any other form goes to the full program, which answers
 * as it always did. The blocking behaviour itself is pinned in hooks.test.ts (through this path).
 */
import { writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { plainHookArgs } from "../../src/cli/pulse-guidance-hook.js";
import { runBin } from "../cli/run-bin.js";
import { project } from "./helpers.js";

describe("pulse guidance hook's fast path", () => {
  it("takes only the plain form: an event and at most one project", () => {
    expect(plainHookArgs(["pre-tool-use"])).toEqual({ event: "pre-tool-use" });
    expect(plainHookArgs(["stop", "-C", "/p"])).toEqual({ event: "stop", project: "/p" });
    expect(plainHookArgs(["--project", "/p", "stop"])).toEqual({ event: "stop", project: "/p" });
    expect(plainHookArgs(["--project=/p", "pre-tool-use"])).toEqual({ event: "pre-tool-use", project: "/p" });
    // Everything else is the full program's to answer.
    for (const args of [[], ["--help"], ["stop", "-h"], ["-C/p", "stop"], ["stop", "-C"], ["stop", "extra"], ["-C", "/a", "-C", "/b", "stop"], ["stop", "--json"]]) expect(plainHookArgs(args), JSON.stringify(args)).toBeUndefined();
  });

  it("answers the plain form as the full program does, and leaves help and bad options to it", async () => {
    const { root, file } = await project();
    const input = JSON.stringify({ tool_name: "Edit", tool_input: { file_path: "a.js" } });
    writeFileSync(file("guidance.md"), "Use tabs.\n");
    const fast = runBin("pulse", ["guidance", "hook", "pre-tool-use", "-C", root], { input });
    // The same call through the full program (an attached -C is not the plain form).
    const full = runBin("pulse", ["guidance", "hook", `-C${root}`, "pre-tool-use"], { input });
    expect(fast.code).toBe(2);
    expect(full.code).toBe(2);
    expect(fast.stderr).toBe(full.stderr);
    expect(runBin("pulse", ["guidance", "hook", "bogus", "-C", root], { input })).toMatchObject({ code: 2, stderr: 'pulse guidance: hook takes pre-tool-use or stop, not "bogus"\n' });
    const help = runBin("pulse", ["guidance", "hook", "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: pulse guidance hook \[options\] <event>/);
    const missing = runBin("pulse", ["guidance", "hook", "stop", "-C"]);
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toMatch(/-C, --project <dir>.*argument missing/);
  }, 60_000);
});
