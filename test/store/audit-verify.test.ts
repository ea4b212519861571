/**
 * `pulse audit verify` beyond the hash chain, on stores a real `pulse run` wrote: each trace's
 * seq is gap-free (signal.emitted is stored, in a clean run too), and every step the journal
 * committed has its events. Events cut from a trace are named by the trace even when whoever cut
 * them re-hashed the chain behind them and moved its checkpoint (BLAKE3 is unkeyed: anyone can).
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type Database } from "../../adapters/sqlite/driver.js";
import { eventOf, type AuditRow } from "../../adapters/sqlite/store-statements.js";
import { chainHash, GENESIS } from "../../src/store/audit-chain.js";
import { initSignatures } from "../../src/runtime/signature.js";
import { runBin } from "../cli/run-bin.js";
import { tempDir } from "./stores.js";

beforeAll(() => initSignatures());
let dir = "";
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = "";
});

function ran(args: string[]): string {
  dir = tempDir();
  const path = join(dir, "pulse.db");
  const r = runBin("pulse", ["run", "manifests/examples", ...args, "--store", `sqlite:${path}`]);
  expect(r.code, r.stderr).toBe(0);
  return path;
}

const verify = (path: string) => runBin("pulse", ["audit", "verify", "--store", `sqlite:${path}`]);

/** Removes events behind the triggers, then re-links and re-hashes the rest of the chain and moves its checkpoint: a careful forger. */
function cut(path: string, where: string): { trace_id: string; seq: number; event_type: string }[] {
  const db: Database = openDatabase(path);
  db.exec("DROP TRIGGER audit_events_no_update; DROP TRIGGER audit_events_no_delete; DROP TRIGGER audit_chains_no_delete; DROP TRIGGER audit_chains_forward_only");
  const removed = db.prepare(`SELECT trace_id, seq, event_type FROM audit_events WHERE ${where}`).all() as { trace_id: string; seq: number; event_type: string }[];
  db.prepare(`DELETE FROM audit_events WHERE ${where}`).run();
  let prev = GENESIS;
  let n = 0;
  const relink = db.prepare("UPDATE audit_events SET chain_seq = ?, prev_hash = ?, hash = ? WHERE position = ?");
  for (const r of db.prepare("SELECT * FROM audit_events ORDER BY position").all() as AuditRow[]) {
    const hash = chainHash(prev, eventOf(r));
    relink.run(n++, prev, hash, r.position);
    prev = hash;
  }
  db.prepare("DELETE FROM audit_chains").run();
  db.prepare("INSERT INTO audit_chains (workspace_id, next_seq, head, upto) VALUES ('default', ?, ?, (SELECT coalesce(max(position), 0) FROM audit_events))").run(n, prev);
  db.close();
  return removed;
}

describe("pulse audit verify: traces and the journal", () => {
  it("a clean run stores every event of each iteration, signal.emitted too: no seq gap, verify ok", () => {
    const path = ran(["--once"]);
    const db = openDatabase(path, { readonly: true });
    const traces = db.prepare("SELECT loop_id, trace_id, group_concat(seq) AS seqs, count(*) AS n, max(seq) AS last FROM (SELECT * FROM audit_events ORDER BY seq) GROUP BY loop_id, trace_id").all() as { loop_id: string; trace_id: string; seqs: string; n: number; last: number }[];
    const emitted = (db.prepare("SELECT count(*) AS n FROM audit_events WHERE event_type = 'signal.emitted'").get() as { n: number }).n;
    db.close();
    expect(traces.length).toBeGreaterThanOrEqual(4);
    for (const t of traces) expect(t.n, `${t.loop_id} ${t.trace_id}: seqs ${t.seqs}`).toBe(t.last + 1);
    // examples.hello's learn sends an OutcomeSignal each iteration.
    expect(emitted).toBeGreaterThanOrEqual(1);
    const ok = verify(path);
    expect(ok.code, ok.stdout).toBe(0);
    expect(ok.stdout).toMatch(/^ok: 1 chain, \d+ events verified/);
  });

  it("an event cut from the middle of a trace, the chain re-hashed behind it: names the trace, exit 1", () => {
    const path = ran(["--once"]);
    const [removed] = cut(path, "position = (SELECT position FROM audit_events WHERE event_type = 'phase.routed' LIMIT 1)");
    const r = verify(path);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe(`broken: workspace default: trace ${removed!.trace_id} of examples.hello: its event seq ${removed!.seq} is missing (the next one is seq ${removed!.seq + 1})\n`);
  });

  it("the end of the trail cut (the last trace's end and what followed it), its checkpoint moved back: names the trace", () => {
    const path = ran(["--once"]);
    const last = "(SELECT trace_id FROM audit_events ORDER BY position DESC LIMIT 1)";
    const removed = cut(path, `trace_id = ${last} AND seq >= (SELECT seq FROM audit_events WHERE trace_id = ${last} AND event_type = 'iteration.completed')`);
    expect(removed.map((e) => e.event_type)).toContain("iteration.completed");
    const r = verify(path);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(new RegExp(`^broken: workspace default: trace ${removed[0]!.trace_id} of examples\\.\\w+: the journal committed its end, and the audit trail has no event of it\n$`));
  });

  it("a journal of 20 iterations over an empty audit trail is not ok", () => {
    // Five runs of the examples, four iterations each (the store carries over).
    const path = ran(["--once"]);
    for (let i = 1; i < 5; i++) expect(runBin("pulse", ["run", "manifests/examples", "--once", "--store", `sqlite:${path}`]).code).toBe(0);
    const db = openDatabase(path, { readonly: true });
    expect((db.prepare("SELECT count(*) AS n FROM iterations WHERE status = 'completed'").get() as { n: number }).n).toBe(20);
    db.close();
    expect(verify(path).code).toBe(0);
    cut(path, "1 = 1");
    const r = verify(path);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^broken: workspace default: trace [0-9a-f]{32} of examples\.\w+: the journal committed this iteration \(\d phases\), and the audit trail has no event of it\n$/);
  });
});
