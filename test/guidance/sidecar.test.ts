/**
 * The sidecar on real files: init that never overwrites, scans as iterations of
 * coding.guidance_watch on the runtime, the pending → ack path with plan.md's hash, state.json
 * written by rename, a torn ledger line, and many writer and scanner processes while the agent
 * acknowledges.
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { appendFileSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createRuntime } from "../../src/embedded.js";
import { GuidanceSidecar, GUIDANCE_LOOP_ID } from "../../src/coding/guidance/sidecar.js";
import { ROOT } from "../cli/run-bin.js";
import { ledger, project, sleep } from "./helpers.js";

const sha = (text: string) => createHash("sha256").update(text).digest("hex");

describe("pulse guidance init", () => {
  it("creates the six files, and keeps what exists as it is", async () => {
    const { root, sidecar, file } = await project();
    expect(readdirSync(join(root, ".pulse")).sort()).toEqual(["constraints.md", "events.jsonl", "guidance.md", "plan.md", "state.json", "task.md"]);
    expect(readFileSync(file("task.md"), "utf8")).toBe("# Task\n\nDescribe the current task here.\n");
    const state = JSON.parse(readFileSync(file("state.json"), "utf8"));
    expect(state).toMatchObject({ schema_version: 2, project_root: root, last_acknowledged_event_id: null, last_acknowledged_plan_sha256: null });
    expect(state.last_hashes["plan.md"]).toBe(sha("# Plan\n\nWrite the current plan here.\n"));
    writeFileSync(file("guidance.md"), "mine\n");
    appendFileSync(file("events.jsonl"), "");
    rmSync(file("plan.md"));
    const again = sidecar.init();
    expect(again.created).toEqual(["plan.md"]);
    expect(again.kept).toEqual(["task.md", "guidance.md", "constraints.md", "events.jsonl", "state.json"]);
    expect(readFileSync(file("guidance.md"), "utf8")).toBe("mine\n");
    // What init found is the baseline, not a change: a scan records only what differs from it.
    expect((await sidecar.scan()).events.map((e) => [e.path, e.kind])).toEqual([[".pulse/guidance.md", "modified"]]);
  });

  it("refuses to work in a directory that was never initialised, saying what to run", async () => {
    const { root } = await project();
    rmSync(join(root, ".pulse", "state.json"));
    const sidecar = await GuidanceSidecar.open({ root });
    await expect(sidecar.shouldInterrupt()).rejects.toThrow(/has no guidance state: run pulse guidance init first/);
  });
});

describe("scans on the runtime", () => {
  it("run as iterations of coding.guidance_watch, each change once, with path, hash, size and kind", async () => {
    const { root, file } = await project();
    const runtime = await createRuntime();
    const sidecar = await GuidanceSidecar.open({ root, runtime });
    const seen: string[] = [];
    runtime.events.subscribe((e) => {
      if (e.type === "phase.completed" && e.loop_id === GUIDANCE_LOOP_ID) seen.push(e.phase_id);
    });
    writeFileSync(file("constraints.md"), "no new dependencies\n");
    rmSync(file("task.md"));
    const r = await sidecar.scan();
    expect(seen).toEqual(["scan_files", "classify_change", "append_event", "track_ack"]);
    expect(r.decision).toBe("invalidating");
    expect(r.events.map((e) => ({ kind: e.kind, path: e.path, sha256: e.sha256, size: e.size }))).toEqual([
      { kind: "deleted", path: ".pulse/task.md", sha256: null, size: null },
      { kind: "modified", path: ".pulse/constraints.md", sha256: sha("no new dependencies\n"), size: 20 },
    ]);
    expect((await sidecar.scan()).events).toEqual([]);
    expect(ledger(root).events).toEqual(r.events);
    expect(r.interrupt.pending_replan_event_id).toBe(r.events[1]!.id);
  });
});

describe("pending → ack", () => {
  it("holds until the current pending event is acknowledged, records plan.md's hash, and writes state.json by rename", async () => {
    const { root, sidecar, file } = await project();
    writeFileSync(file("guidance.md"), "# Guidance\n\nPrefer a smaller patch.\n");
    const d = await sidecar.shouldInterrupt();
    expect(d.needs_replan).toBe(true);
    // Updating the plan alone does not clear it.
    writeFileSync(file("plan.md"), "# Plan\n\n1. smaller patch\n");
    const still = await sidecar.shouldInterrupt(d.latest_event_id);
    expect(still).toMatchObject({ needs_replan: true, pending_replan_event_id: d.pending_replan_event_id, has_new_events: true, changed_files: [".pulse/plan.md"] });
    const ack = await sidecar.ack(d.pending_replan_event_id);
    expect(ack).toEqual({ accepted: true, acknowledged_event_id: d.pending_replan_event_id, plan_sha256: sha("# Plan\n\n1. smaller patch\n"), reason: "Replan acknowledged for the latest guidance or constraints event." });
    const state = JSON.parse(readFileSync(file("state.json"), "utf8"));
    expect(state).toMatchObject({ last_acknowledged_event_id: d.pending_replan_event_id, last_acknowledged_plan_sha256: ack.plan_sha256 });
    expect(Date.parse(state.last_acknowledged_at)).toBeGreaterThan(Date.now() - 60_000);
    expect(readdirSync(join(root, ".pulse")).filter((f) => f.endsWith(".tmp") || f.endsWith(".lock"))).toEqual([]);
    expect((await sidecar.shouldInterrupt()).needs_replan).toBe(false);
    // A change after the ack is pending again, and the old id is now refused.
    writeFileSync(file("constraints.md"), "no network\n");
    const again = await sidecar.shouldInterrupt();
    expect(again.needs_replan).toBe(true);
    expect((await sidecar.ack(d.pending_replan_event_id)).reason).toMatch(/There is no pending|is stale/);
  });

  it("an edit made before the ack is judged with it: the ack of an event superseded a moment ago is stale", async () => {
    const { sidecar, file } = await project();
    writeFileSync(file("guidance.md"), "A\n");
    const first = (await sidecar.shouldInterrupt()).pending_replan_event_id!;
    writeFileSync(file("guidance.md"), "B\n"); // no scan in between: the ack's own scan records it
    const ack = await sidecar.ack(first);
    expect(ack.accepted).toBe(false);
    expect(ack.reason).toMatch(new RegExp(`Event ${first} is stale. Acknowledge the latest pending replan event evt_\\S+ instead.`));
  });

  it("a torn last line of the ledger is skipped, and the next event still gets a line of its own", async () => {
    const { root, sidecar, file } = await project();
    appendFileSync(file("events.jsonl"), '{"id":"evt_torn","kind":"modif');
    writeFileSync(file("guidance.md"), "C\n");
    const d = await sidecar.shouldInterrupt();
    expect(d.needs_replan).toBe(true);
    const { events, skipped } = ledger(root);
    expect(skipped).toBe(1);
    expect(events.map((e) => e.path)).toEqual([".pulse/guidance.md"]);
    expect((await sidecar.ack(d.pending_replan_event_id)).accepted).toBe(true);
  });
});

describe("concurrency", () => {
  it("many writer and scanner processes while the agent acknowledges: every change recorded once, every accepted ack the pending one at that moment", async () => {
    const { root, sidecar, file } = await project();
    const module = join(ROOT, "dist/src/coding/guidance/sidecar.js");
    // Every process starts its 1.5 s together, once all are up: on a loaded machine starting node
    // alone can take longer than the window, and then nothing would overlap.
    const go = join(root, "go");
    const ready = `process.stdout.write("ready\\n"); while (!require("node:fs").existsSync(${JSON.stringify(go)})) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);`;
    const writer = (name: string, rename: boolean) => `
      ${ready}
      const fs = require("node:fs"); const end = Date.now() + 1500; let i = 0;
      while (Date.now() < end) {
        const p = ${JSON.stringify(file(name))}; const text = "${name} " + process.pid + " " + (i++) + "\\n";
        if (${rename}) { fs.writeFileSync(p + ".tmp" + process.pid, text); fs.renameSync(p + ".tmp" + process.pid, p); } else fs.writeFileSync(p, text);
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 3);
      }`;
    const scanner = `
      const { GuidanceSidecar } = await import(${JSON.stringify(module)});
      const s = await GuidanceSidecar.open({ root: ${JSON.stringify(root)} });
      const require = (await import("node:module")).createRequire(import.meta.url);
      ${ready}
      const end = Date.now() + 1500;
      while (Date.now() < end) await s.scan();`;
    const children = [
      ...["guidance.md", "constraints.md", "task.md"].flatMap((f) => [spawn(process.execPath, ["-e", writer(f, true)]), spawn(process.execPath, ["-e", writer(f, false)])]),
      spawn(process.execPath, ["--input-type=module", "-e", scanner]),
      spawn(process.execPath, ["--input-type=module", "-e", scanner]),
    ];
    const exits = children.map((c) => {
      let err = "";
      c.stderr!.on("data", (d) => (err += d));
      return new Promise<string>((r) => c.on("exit", (code) => r(code === 0 ? "" : `exit ${code}: ${err}`)));
    });
    await Promise.all(children.map((c) => new Promise<void>((r) => {
      let out = "";
      c.stdout!.on("data", (d) => {
        out += d;
        if (out.includes("ready")) r();
      });
      c.on("exit", () => r());
    })));
    writeFileSync(go, "");
    // The agent: replans and acknowledges whatever is pending, over and over, while the others write and scan.
    const accepted: { id: string; plan: string }[] = [];
    let refusedStale = 0;
    const agentEnd = Date.now() + 1500;
    for (let i = 0; Date.now() < agentEnd; i++) {
      const d = await sidecar.shouldInterrupt();
      if (!d.needs_replan) continue;
      const plan = `# Plan ${i}\n`;
      writeFileSync(file("plan.md"), plan);
      const ack = await sidecar.ack(d.pending_replan_event_id);
      if (ack.accepted) {
        expect(ack.plan_sha256).toBe(sha(plan));
        accepted.push({ id: ack.acknowledged_event_id!, plan: ack.plan_sha256! });
      } else {
        expect(ack.reason).toMatch(/is stale\. Acknowledge the latest pending replan event evt_/);
        refusedStale++;
      }
    }
    expect((await Promise.all(exits)).filter(Boolean)).toEqual([]);
    await sidecar.scan();
    const { events, skipped } = ledger(root);
    expect(skipped).toBe(0);
    expect(new Set(events.map((e) => e.id)).size).toBe(events.length);
    expect(events.length).toBeGreaterThan(20);
    // Recorded once: no two consecutive events of a file carry the same content.
    const last = new Map<string, string | null>();
    for (const e of events) {
      expect(last.get(e.path) === e.sha256 && last.has(e.path), `${e.path} recorded twice with ${e.sha256}`).toBe(false);
      last.set(e.path, e.sha256);
    }
    // The ledger ends where the files are.
    for (const f of ["guidance.md", "constraints.md", "task.md", "plan.md"]) expect(last.get(`.pulse/${f}`) ?? JSON.parse(readFileSync(file("state.json"), "utf8")).last_hashes[f]).toBe(sha(readFileSync(file(f), "utf8")));
    // Every acknowledged id is an invalidating event, acknowledged in ledger order.
    const index = accepted.map((a) => events.findIndex((e) => e.id === a.id));
    expect(index.every((i) => i >= 0 && /guidance|constraints/.test(events[i]!.path))).toBe(true);
    expect([...index].sort((a, b) => a - b)).toEqual(index);
    expect(accepted.length + refusedStale).toBeGreaterThan(0);
    // After the writers stop, the last pending change is acknowledged and nothing is left.
    const final = await sidecar.shouldInterrupt();
    if (final.needs_replan) expect((await sidecar.ack(final.pending_replan_event_id)).accepted).toBe(true);
    expect((await sidecar.shouldInterrupt()).needs_replan).toBe(false);
    await sleep(0);
  }, 60_000);
});
