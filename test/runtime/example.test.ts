import { describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";

describe("examples/quickstart.ts (the runnable example of docs/runtime.md)", () => {
  it("runs the §4 loop three times, closing each iteration", () => {
    if (!existsSync("dist/examples/quickstart.js")) throw new Error("run `npm run build` first (npm test does)");
    const r = spawnSync(process.execPath, ["dist/examples/quickstart.js"], { encoding: "utf8" });
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    expect(r.stdout.match(/-> completed, closed, trace [0-9a-f]{32}, \d+ audit events/g)).toHaveLength(3);
    expect(r.stdout).toContain("iterations 3, closure rate 1");
    // What it shows: the repeated query reads again, since the first act wrote to memory, and is
    // grounded on that answer; the same read with nothing written in between is replayed.
    expect(r.stdout).toMatch(/iteration 2: query "answer"\n {2}retrieve_ctx +completed\n/);
    expect(r.stdout).toMatch(/\(act stores node_1, grounded on nothing retrieved yet\)/);
    expect(r.stdout).toMatch(/\(act stores node_2, grounded on node_1\)/);
    expect(r.stdout).toMatch(/\(act stores node_3, grounded on node_1\)/);
    expect(r.stdout).toMatch(/nothing written in between:\n {2}retrieve_ctx +completed\n {2}retrieve_ctx +replayed/);
  });
});
