/**
 * A store damaged in the middle of its file (real SQLite pages overwritten, where neither opening
 * it nor `pulse run`'s own reads reach): `pulse audit verify`, `pulse audit`, `pulse store info`
 * and `pulse store export` say so in the documented one line, exit 1 (not "internal error",
 * exit 3), and `pulse run` refuses it before writing a byte. The undamaged copy is the near miss.
 */
import { createHash, randomBytes } from "node:crypto";
import { copyFileSync, openSync, readFileSync, rmSync, writeSync, closeSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openDatabase } from "../../adapters/sqlite/driver.js";
import { runBin } from "../cli/run-bin.js";
import { tempDir } from "./stores.js";

let dir = "";
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = "";
});

const sha = (path: string) => createHash("sha256").update(readFileSync(path)).digest("hex");
const DAMAGED = /: not a pulse store, or a damaged one \(.*\); restore it from a backup \(docs\/store\.md\) or move it aside$/;

/** A store three runs wrote, folded into one file; and a copy with a leaf page of old audit events overwritten. */
function stores(): { good: string; bad: string } {
  dir = tempDir();
  const good = join(dir, "good.db");
  for (let i = 0; i < 3; i++) expect(runBin("pulse", ["run", "manifests/examples", "--once", "--store", `sqlite:${good}`]).code).toBe(0);
  expect(runBin("pulse", ["store", "vacuum", "--store", `sqlite:${good}`]).code).toBe(0);
  const db = openDatabase(good, { readonly: true });
  const size = db.pragma("page_size", { simple: true }) as number;
  const leaves = db.prepare("SELECT pageno FROM dbstat WHERE name = 'audit_events' AND pagetype = 'leaf' ORDER BY pageno").all() as { pageno: number }[];
  db.close();
  expect(leaves.length).toBeGreaterThan(4);
  const bad = join(dir, "bad.db");
  copyFileSync(good, bad);
  const fd = openSync(bad, "r+");
  writeSync(fd, randomBytes(size), 0, size, ((leaves[1] as { pageno: number }).pageno - 1) * size);
  closeSync(fd);
  return { good, bad };
}

describe("a store damaged mid-file", () => {
  it("every reading command says so in one line, exit 1; the undamaged copy reads", () => {
    const { good, bad } = stores();
    for (const command of [["audit", "verify"], ["audit", "--limit", "100000"], ["store", "info"], ["store", "export", "--jsonl"]]) {
      const r = runBin("pulse", [...command, "--store", `sqlite:${bad}`]);
      const name = `pulse ${command.filter((w) => !w.startsWith("-") && !/^\d+$/.test(w)).join(" ")}`;
      expect(r.code, `${name}: ${r.stderr}`).toBe(1);
      const lines = r.stderr.trim().split("\n");
      expect(lines, `${name}: ${r.stderr}`).toHaveLength(1);
      expect(lines[0], name).toMatch(new RegExp(`^${name}: .*bad\\.db${DAMAGED.source}`));
      const ok = runBin("pulse", [...command, "--store", `sqlite:${good}`]);
      expect(ok.code, `${name} on the undamaged copy: ${ok.stderr}`).toBe(0);
      expect(ok.stderr).toBe("");
    }
  });

  it("pulse run refuses it before writing to it, one line, exit 1; the undamaged copy runs on", () => {
    const { good, bad } = stores();
    const before = sha(bad);
    const r = runBin("pulse", ["run", "manifests/examples", "--once", "--store", `sqlite:${bad}`]);
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split("\n"), r.stderr).toHaveLength(1);
    expect(r.stderr.trim()).toMatch(new RegExp(`^pulse run: .*bad\\.db${DAMAGED.source}`));
    expect(r.stdout).toBe("");
    expect(sha(bad)).toBe(before);
    const ok = runBin("pulse", ["run", "manifests/examples", "--once", "--store", `sqlite:${good}`]);
    expect(ok.code, ok.stderr).toBe(0);
  });
});
