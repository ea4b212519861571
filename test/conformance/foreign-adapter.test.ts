/**
 * The documents are enough: fixtures/foreign-adapter/adapter.py is a PULSE runtime in Python,
 * standard library only, written from the spec, docs/decisions.md and docs/conformance/ without
 * running a probe against the harness. It must reach 12/12, every message schema-valid, on the
 * virtual clock it implements for threads.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../cli/run-bin.js";

const ADAPTER = join(ROOT, "test/conformance/fixtures/foreign-adapter/adapter.py");
const python = spawnSync("python3", ["--version"], { encoding: "utf8" });

describe("a runtime written from the documents alone", () => {
  it.skipIf(python.status !== 0 && process.env.CI !== "true")("passes all twelve tests over stdio, every message matching the schemas", () => {
    const r = spawnSync(process.execPath, [join(ROOT, "dist/bin/pulse-conform.mjs"), "--validate-protocol", "--", "python3", ADAPTER], { cwd: ROOT, encoding: "utf8", timeout: 120_000 });
    expect(r.status, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^pulse-conform: py-pulse 0\.1\.0 \(python\) via .*; virtual clock, evidence recording-substrate$/m);
    expect(r.stdout.match(/^✓ +\d+ \w+ +passed/gm)).toHaveLength(12);
    expect(r.stdout).toMatch(/\nprotocol: every message matched its schema\n/);
    expect(r.stdout.endsWith("conformant: py-pulse 0.1.0 against PULSE v0.1 conformance suite 0.1.0\nresults: 12 passed\n12 passed, 0 failed\n")).toBe(true);
  }, 150_000);
});
