import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { globToRegExp } from "../../adapters/agents/http/file-tools.js";
import { ToolRunner } from "../../adapters/agents/http/tools.js";
import { tempDir } from "./support/fake-agent.js";

let ws: ReturnType<typeof tempDir>;
let outside: ReturnType<typeof tempDir>;
let tools: ToolRunner;
beforeEach(() => {
  ws = tempDir("pulse-tools-ws-");
  outside = tempDir("pulse-tools-out-");
  writeFileSync(join(ws.path, "a.txt"), "alpha\nbeta\nbeta\n");
  mkdirSync(join(ws.path, "src/deep"), { recursive: true });
  writeFileSync(join(ws.path, "src/deep/x.ts"), "export const x = 1;\n");
  writeFileSync(join(outside.path, "secret.txt"), "secret");
  tools = new ToolRunner(ws.path, { parentEnv: { PATH: process.env.PATH } });
});
afterEach(() => {
  ws.cleanup();
  outside.cleanup();
});

describe("HTTP driver tools: confinement", () => {
  it("refuses paths outside the workspace, .., and symlinks leading out; accepts the near misses", async () => {
    for (const path of [join(outside.path, "secret.txt"), "../" + outside.path.split("/").at(-1) + "/secret.txt", "src/../../etc/passwd"]) {
      const r = await tools.run("read_file", { path });
      expect(r.ok, path).toBe(false);
      expect(r.output).toMatch(/outside the workspace/);
    }
    symlinkSync(outside.path, join(ws.path, "link-out"));
    expect((await tools.run("read_file", { path: "link-out/secret.txt" })).output).toMatch(/leads outside the workspace/);
    expect((await tools.run("write_file", { path: "link-out/new.txt", content: "x" })).output).toMatch(/leads outside/);
    symlinkSync(join(ws.path, "src"), join(ws.path, "link-in"));
    expect((await tools.run("read_file", { path: "link-in/deep/x.ts" })).ok).toBe(true);
    expect((await tools.run("write_file", { path: "..weird-name.txt", content: "fine" })).ok).toBe(true);
    expect((await tools.run("read_file", { path: join(ws.path, "a.txt") })).ok).toBe(true); // absolute, inside
  });
});

describe("HTTP driver tools: exact edits", () => {
  it("edit needs a read first, an exact unique match; failures change nothing", async () => {
    expect((await tools.run("edit_file", { path: "a.txt", old_string: "alpha", new_string: "ALPHA" })).output).toMatch(/read a.txt before editing/);
    await tools.run("read_file", { path: "a.txt" });
    expect((await tools.run("edit_file", { path: "a.txt", old_string: "gamma", new_string: "x" })).output).toMatch(/not found/);
    expect((await tools.run("edit_file", { path: "a.txt", old_string: "beta", new_string: "x" })).output).toMatch(/occurs 2 times/);
    expect((await tools.run("edit_file", { path: "a.txt", old_string: "alph", new_string: "x", extra: 1 })).ok).toBe(true); // a unique substring is exact enough
    expect(readFileSync(join(ws.path, "a.txt"), "utf8")).toBe("xa\nbeta\nbeta\n");
    expect((await tools.run("edit_file", { path: "a.txt", old_string: "beta", new_string: "B", replace_all: true })).ok).toBe(true);
    expect(readFileSync(join(ws.path, "a.txt"), "utf8")).toBe("xa\nB\nB\n");
    writeFileSync(join(ws.path, "a.txt"), "changed behind its back\n");
    expect((await tools.run("edit_file", { path: "a.txt", old_string: "changed", new_string: "x" })).output).toMatch(/changed since it was read/);
  });

  it("multi_edit is all or nothing", async () => {
    await tools.run("read_file", { path: "a.txt" });
    const r = await tools.run("multi_edit", { path: "a.txt", edits: [{ old_string: "alpha", new_string: "A" }, { old_string: "nope", new_string: "N" }] });
    expect(r.output).toMatch(/edit 2: old_string was not found/);
    expect(readFileSync(join(ws.path, "a.txt"), "utf8")).toBe("alpha\nbeta\nbeta\n");
    expect((await tools.run("multi_edit", { path: "a.txt", edits: [{ old_string: "alpha", new_string: "A" }, { old_string: "beta\nbeta", new_string: "B" }] })).ok).toBe(true);
    expect(readFileSync(join(ws.path, "a.txt"), "utf8")).toBe("A\nB\n");
  });
});

describe("HTTP driver tools: read, list, glob, grep, shell", () => {
  it("read with line numbers and ranges; list; glob; grep", async () => {
    expect((await tools.run("read_file", { path: "a.txt", offset: 2, limit: 1 })).output).toBe("     2\tbeta");
    expect((await tools.run("list_directory", {})).output).toBe("a.txt\nsrc/");
    expect((await tools.run("glob", { pattern: "**/*.ts" })).output).toBe("src/deep/x.ts");
    expect((await tools.run("grep", { pattern: "^bet", glob: "*.txt" })).output).toBe("a.txt:2: beta\na.txt:3: beta");
    expect((await tools.run("grep", { pattern: "(" })).output).toMatch(/invalid regular expression/);
    expect((await tools.run("read_file", { path: "nope.txt" })).output).toMatch(/does not exist/);
    expect((await tools.run("frobnicate", {})).output).toMatch(/unknown tool frobnicate/);
    expect(globToRegExp("src/**/*.{ts,js}").test("src/a/b/c.js")).toBe(true);
    expect(globToRegExp("*.ts").test("src/x.ts")).toBe(false);
  });

  it("shell runs in the workspace with an exit code, and is stopped at its timeout", async () => {
    const r = await tools.run("shell", { command: "pwd; echo err >&2; exit 3" });
    expect(r.ok).toBe(false);
    expect(r.output).toContain("exit code 3");
    expect(r.output).toContain(ws.path.split("/").at(-1));
    expect(r.output).toContain("[stderr]\nerr");
    const t0 = Date.now();
    const slow = await tools.run("shell", { command: "sleep 20", timeout_ms: 300 });
    expect(slow.output).toMatch(/did not finish within 300 ms/);
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect((await tools.run("shell", { command: "echo ok" })).ok).toBe(true);
  });
});
