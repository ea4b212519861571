/**
 * The Python adapter skeleton in docs/conformance/driver-protocol.md runs as printed and reaches
 * what the page says it reaches: the block is extracted from the Markdown and run with python3
 * against the built harness.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../cli/run-bin.js";
import { exampleBlock, fencedBlocks, readDoc } from "../format/markdown-blocks.js";

const doc = readDoc("conformance/driver-protocol.md");
const python = spawnSync("python3", ["--version"], { encoding: "utf8" });

describe("the Python skeleton of driver-protocol.md", () => {
  it.skipIf(python.status !== 0 && process.env.CI !== "true")("runs as printed and reaches the documented result", () => {
    const file = join(mkdtempSync(join(tmpdir(), "pulse-skeleton-")), "adapter.py");
    writeFileSync(file, exampleBlock(doc, "python-skeleton"));
    const r = spawnSync(process.execPath, [join(ROOT, "dist/bin/pulse-conform.mjs"), "--", "python3", file], { cwd: ROOT, encoding: "utf8", timeout: 60_000 });
    expect(r.status, r.stdout + r.stderr).toBe(2);
    // The closing lines, exactly as the page prints them.
    const section = doc.slice(doc.indexOf("**What it reaches, as printed.**"));
    const closing = fencedBlocks(section).find((b) => b.info === "text")!.body;
    expect(r.stdout.endsWith(closing)).toBe(true);
    // Which tests error on which missing method, as the page lists them.
    const flat = section.replace(/\s+/g, " ");
    const listed = (method: string) => (new RegExp(`${method.replace(".", "\\.")}\` \\(tests ([\\d, ]+)\\)`).exec(flat)?.[1] ?? "").split(", ").map(Number);
    for (const method of ["phase.invoke", "iteration.run"]) {
      for (const n of listed(method)) expect(r.stdout, `test ${n}`).toMatch(new RegExp(`^E +${n} \\w+ +errored .*\\n +UNSUPPORTED: the adapter does not implement ${method.replace(".", "\\.")}$`, "m"));
    }
    expect([...listed("phase.invoke"), ...listed("iteration.run")].sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    expect(r.stdout).toMatch(/^✓ 12 manifest_validates_against_schema +passed/m);
  }, 90_000);
});
