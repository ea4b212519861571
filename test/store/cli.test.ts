/**
 * `pulse audit`, `pulse audit verify` and `pulse store info|vacuum|export` on the store a real
 * `pulse run` wrote; a tampered file, a missing one, a read-only directory: one line, exit 1.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, cpSync, mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openDatabase } from "../../adapters/sqlite/driver.js";
import { ROOT, runBin } from "../cli/run-bin.js";
import { tempDir } from "./stores.js";

let dir = "";
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = "";
});

function ranOnce(): string {
  dir = tempDir();
  const path = join(dir, "pulse.db");
  const r = runBin("pulse", ["run", "manifests/examples", "--once", "--store", `sqlite:${path}`]);
  expect(r.code, r.stderr).toBe(0);
  return path;
}

describe("pulse audit and pulse store", () => {
  it("lists the trail readably, filtered and paged, as JSON lines too, and verifies its chains", () => {
    const path = ranOnce();
    const store = ["--store", `sqlite:${path}`];
    const page = runBin("pulse", ["audit", ...store, "--limit", "3"]);
    expect(page.code).toBe(0);
    const lines = page.stdout.trim().split("\n");
    expect(lines).toHaveLength(4);
    expect(lines[0]).toMatch(/^\s*1 {2}\d{4}-\d\d-\d\dT[\d:.]+Z {2}default {2}examples\.\S+ +[0-9a-f]{8} {2}#0 +iteration\.started/);
    expect(lines[3]).toBe(`more: pulse audit --after 3 --store sqlite:${path}`);
    const next = runBin("pulse", ["audit", ...store, "--limit", "3", "--after", "3"]);
    expect(next.stdout.split("\n")[0]).toMatch(/^\s*4 /);

    const json = runBin("pulse", ["audit", ...store, "--loop", "examples.listener", "--json", "--limit", "1000"]);
    const events = json.stdout.trim().split("\n").map((l) => JSON.parse(l) as { loop_id: string; trace_id: string; hash: string; event_type: string });
    expect(events.length).toBeGreaterThan(3);
    expect(new Set(events.map((e) => e.loop_id))).toEqual(new Set(["examples.listener"]));
    const trace = events[0]!.trace_id;
    const one = runBin("pulse", ["audit", ...store, "--trace", trace, "--json"]).stdout.trim().split("\n").map((l) => JSON.parse(l) as { trace_id: string; event_type: string });
    expect(one.every((e) => e.trace_id === trace)).toBe(true);
    expect(one.at(-1)?.event_type).toBe("iteration.completed");
    expect(runBin("pulse", ["audit", ...store, "--workspace", "elsewhere"]).stdout).toMatch(/^no audit events in sqlite /);

    const ok = runBin("pulse", ["audit", "verify", ...store]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/^ok: 1 chain, \d+ events verified in sqlite /);
  });

  it("names the first broken link of a file edited by hand, exit 1", () => {
    const path = ranOnce();
    const db = openDatabase(path);
    db.exec("DROP TRIGGER audit_events_no_update");
    db.prepare("UPDATE audit_events SET event_type = 'phase.forged' WHERE chain_seq = 5").run();
    db.close();
    const r = runBin("pulse", ["audit", "verify", "--store", `sqlite:${path}`]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^broken: workspace default: event 5 \([0-9a-f]{32}-\d+\): its content does not match its hash/);
  });

  it("says what the file holds, compacts it, and exports every row as JSON lines", () => {
    const path = ranOnce();
    const store = ["--store", `sqlite:${path}`];
    const info = runBin("pulse", ["store", "info", ...store]);
    expect(info.code).toBe(0);
    expect(info.stdout).toMatch(/^sqlite store .*pulse\.db: schema version 4, [\d.]+ KiB\n/);
    expect(info.stdout).toMatch(/\n {2}audit_events +\d+\n/);
    const counts = JSON.parse(runBin("pulse", ["store", "info", ...store, "--json"]).stdout) as { counts: Record<string, number> };
    const exported = runBin("pulse", ["store", "export", "--jsonl", ...store]).stdout.trim().split("\n").map((l) => JSON.parse(l) as { table: string });
    expect(exported.filter((r) => r.table === "audit_events")).toHaveLength(counts.counts.audit_events!);
    expect(exported.filter((r) => r.table === "iterations")).toHaveLength(counts.counts.iterations!);
    expect(runBin("pulse", ["store", "export", ...store]).code).toBe(2);
    const vacuum = runBin("pulse", ["store", "vacuum", ...store]);
    expect(vacuum.code).toBe(0);
    expect(vacuum.stdout).toMatch(/^vacuumed sqlite .*: [\d.]+ KiB → [\d.]+ KiB\n$/);
    expect(runBin("pulse", ["audit", "verify", ...store]).code).toBe(0);
  });

  it("a missing store, and a memory store, are said so in one line", () => {
    dir = tempDir();
    const missing = runBin("pulse", ["audit", "--store", `sqlite:${join(dir, "none.db")}`]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^pulse audit: .*none\.db: no store there yet \(pulse run creates it; --store names another\)\n$/);
    expect(runBin("pulse", ["store", "vacuum", "--store", "memory:"]).stderr).toMatch(/works on a SQLite store/);
  });

  it("takes a plain file path as pulse session does, and refuses a scheme it does not know", () => {
    const path = ranOnce();
    const plain = runBin("pulse", ["audit", "verify", "--store", path]);
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stdout).toMatch(/^ok: \d+ chains?, \d+ events? verified in /);
    const vacuum = runBin("pulse", ["store", "vacuum", "--store", path]);
    expect(vacuum.code, vacuum.stderr).toBe(0);
    expect(vacuum.stdout).toMatch(/^vacuumed /);
    const typo = runBin("pulse", ["audit", "verify", "--store", `sqllite:${path}`]);
    expect(typo.code).toBe(1);
    expect(typo.stderr).toBe(`pulse audit verify: --store takes sqlite:PATH, a file path or memory: (postgres://… for a fleet), not "sqllite:${path}" (default sqlite:.pulse/pulse.db)\n`);
  });

  it("a read-only directory: pulse run refuses in one line, exit 1, and the store beside it keeps what was committed", () => {
    const path = ranOnce();
    const locked = join(dir, "locked");
    mkdirSync(locked);
    chmodSync(locked, 0o555);
    chmodSync(dir, 0o755);
    // As another user than root, whom permissions do not stop. That user may not reach this
    // checkout (a clone inside a 0700 directory), so it runs a copy of the bin and of the SQLite
    // driver it loads, in the test's own world-readable directory.
    const asUser = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};
    const copy = join(dir, "pulse");
    cpSync(join(ROOT, "dist/bin"), join(copy, "dist/bin"), { recursive: true });
    for (const part of ["better-sqlite3/package.json", "better-sqlite3/lib", "better-sqlite3/build/Release/better_sqlite3.node", "bindings", "file-uri-to-path"]) cpSync(join(ROOT, "node_modules", part), join(copy, "node_modules", part), { recursive: true });
    cpSync(join(ROOT, "manifests/examples/hello.loop.yaml"), join(copy, "hello.loop.yaml"));
    const r = spawnSync(process.execPath, [join(copy, "dist/bin/pulse.mjs"), "run", join(copy, "hello.loop.yaml"), "--once", "--store", `sqlite:${join(locked, "pulse.db")}`], { cwd: dir, encoding: "utf8", env: { PATH: process.env.PATH ?? "" }, ...asUser });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^pulse run: .*locked\/pulse\.db: (cannot write the store|cannot open the store)/);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(runBin("pulse", ["audit", "verify", "--store", `sqlite:${path}`]).code).toBe(0);
  });
});
