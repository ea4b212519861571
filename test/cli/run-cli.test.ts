import { describe, expect, it } from "vitest";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { createServer, type AddressInfo } from "node:net";
import { createServer as createHttpServer } from "node:http";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { resolve } from "node:path";
import { isolatedStore, ROOT, runBin } from "./run-bin.js";

function jsonLines(stdout: string): Record<string, any>[] {
  return stdout.trim().split("\n").map((line) => JSON.parse(line));
}

describe("pulse run", () => {
  it("runs every shipped loop once, delivers their signals, and closes every iteration (the README's command)", () => {
    const r = runBin("pulse", ["run", "manifests/", "--once", "--json"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const events = jsonLines(r.stdout);
    const finished = events.filter((e) => e.type === "iteration.finished");
    const loops = new Set(finished.map((e) => e.loop_id));
    expect([...loops].sort()).toEqual([
      "agentromatic.deliberation",
      "coding.guidance_watch",
      "coding.plan_decide_act",
      "coding.pulse_session",
      "coding.pulsing_workflow",
      "examples.hello",
      "examples.idle_consolidation",
      "examples.listener",
      "graphonomous.continual_learning",
      "graphonomous.deliberate",
      "prism.benchmark",
    ]);
    expect(finished.every((e) => e.status === "completed")).toBe(true);
    // examples.hello's learn phase signals examples.listener, which iterates on that signal.
    const delivered = events.filter((e) => e.type === "signal.delivered" && e.connection === "outcomes_to_listener");
    expect(delivered.length).toBeGreaterThan(0);
    const bySignal = events.filter((e) => e.type === "iteration.started" && e.loop_id === "examples.listener" && e.cause?.signal);
    expect(bySignal.length).toBeGreaterThan(0);
    expect(bySignal[0]?.cause.source).toBe("loop:examples.hello/phase:learn");
  });

  it("prints a readable trace: what was loaded, one line per iteration with its phases, and a summary", () => {
    const r = runBin("pulse", ["run", "manifests/examples", "--once", "--no-color"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^loaded examples\.hello: fetch → decide → apply → learn ↺ fetch; cadence periodic 2s, fallback manual$/m);
    expect(r.stdout).toMatch(/examples\.hello +#1 \(kickoff\) +✓ fetch +✓ decide →apply +✓ apply +✓ learn +closed/);
    expect(r.stdout).toMatch(/examples\.listener +#\d \(signal from examples\.hello\/learn\)/);
    expect(r.stdout).toMatch(/⇢ signal outcomes_to_listener to examples\.listener: accepted/);
    expect(r.stdout).toMatch(/^examples\.listener +2 iterations \(2 completed\), closure rate 1\.00$/m);
    expect(r.stdout).not.toMatch(/\x1b\[/);
  });

  it("stops after --iterations N in all, letting in-flight work finish", () => {
    const r = runBin("pulse", ["run", "manifests/examples/hello.loop.yaml", "--iterations", "1", "--json"]);
    expect(r.code).toBe(0);
    expect(jsonLines(r.stdout).filter((e) => e.type === "iteration.finished")).toHaveLength(1);
  });

  it("--iterations N across many loops: exactly N iterations start in all, signals included; inner-loop iterations are not counted", () => {
    for (const n of [1, 3, 12]) {
      const r = runBin("pulse", ["run", "manifests/", "--iterations", String(n), "--json"]);
      expect(r.code, r.stderr).toBe(0);
      const events = jsonLines(r.stdout);
      const started = events.filter((e) => e.type === "iteration.started");
      expect(started.filter((e) => typeof e.cause?.inner_of !== "string"), `--iterations ${n}`).toHaveLength(n);
      expect(events.filter((e) => e.type === "iteration.finished")).toHaveLength(started.length);
      const summary = events.at(-1) as Record<string, any>;
      expect(summary).toMatchObject({ type: "run.summary", stopped: "iterations", exit_code: 0, iterations: n, iterations_asked: n });
      expect(summary.loops.reduce((sum: number, l: { iterations: number; inner: number }) => sum + l.iterations - l.inner, 0)).toBe(n);
      // Signals arriving once the N are spent are refused with the reason, never run silently.
      for (const d of events.filter((e) => e.type === "signal.dropped")) expect(d.message).toMatch(/iterations \(maxIterations\) have all started|not in this host/);
    }
  });

  it("-e runs the loops whose event cadence names the event, and says when none does", () => {
    const r = runBin("pulse", ["run", "manifests/graphonomous.continual_learning.yaml", "--no-kickoff", "--iterations", "1", "-e", "agent_query={\"query\":\"q\"}", "--json"]);
    expect(r.code).toBe(0);
    expect(jsonLines(r.stdout).find((e) => e.type === "iteration.started")).toMatchObject({ loop_id: "graphonomous.continual_learning", cause: { event: "agent_query" } });
    const none = runBin("pulse", ["run", "manifests/graphonomous.continual_learning.yaml", "--once", "-e", "nobody_listens"]);
    expect(none.stdout).toMatch(/note: event "nobody_listens": no loop iterated/);
  });

  it("--http-mode binary sends --route signals in the CloudEvents binary content mode", async () => {
    const seen: { type?: string; specversion?: string; traceparent?: string }[] = [];
    const receiver = createHttpServer((req, res) => {
      seen.push({ type: req.headers["content-type"], specversion: req.headers["ce-specversion"] as string | undefined, traceparent: req.headers.traceparent as string | undefined });
      req.resume();
      req.on("end", () => res.writeHead(200, { "content-type": "application/json" }).end('{"outcome":"accepted"}'));
    });
    await new Promise<void>((done) => receiver.listen(0, "127.0.0.1", done));
    try {
      const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
      const run = promisify(execFile)(process.execPath, [resolve(ROOT, "dist/bin/pulse.mjs"), "run", "manifests/examples/hello.loop.yaml", "--once", "--route", `examples.listener=${url}`, "--http-mode", "binary"], { cwd: ROOT, env: { ...process.env, ...isolatedStore() } });
      await run;
      expect(seen).toHaveLength(1);
      expect(seen[0]).toMatchObject({ specversion: "1.0", type: "application/json" });
      expect(seen[0]?.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/);
    } finally {
      receiver.close();
    }
  });

  it("says why a signal was dropped, and a port already in use is a usage error", async () => {
    const r = runBin("pulse", ["run", "manifests/examples/hello.loop.yaml", "--once"]);
    expect(r.stdout).toMatch(/dropped \(rejected: loop examples\.listener is not in this host and no transport route reaches it\)/);
    const blocker = createServer();
    await new Promise<void>((done) => blocker.listen(0, "127.0.0.1", done));
    try {
      const port = (blocker.address() as AddressInfo).port;
      const busy = runBin("pulse", ["run", "manifests/examples/hello.loop.yaml", "--once", "--listen", String(port)]);
      expect(busy.code).toBe(2);
      expect(busy.stderr).toBe(`pulse: --listen ${port}: cannot receive signals on 127.0.0.1:${port}: the port is already in use\n`);
    } finally {
      blocker.close();
    }
  });

  it("runs on the cadence for --duration: a 2s periodic loop iterates again within 2.5s; with --json every iteration.started names its cause, and a summary record ends the run", () => {
    const r = runBin("pulse", ["run", "manifests/examples", "--duration", "2500ms", "--json"]);
    expect(r.code).toBe(0);
    const events = jsonLines(r.stdout);
    const finished = events.filter((e) => e.type === "iteration.finished" && e.loop_id === "examples.hello");
    expect(finished.length).toBeGreaterThanOrEqual(2);
    const causes = events.filter((e) => e.type === "iteration.started").map((e) => e.cause);
    expect(causes).toEqual(expect.arrayContaining([{ trigger: "kickoff" }, expect.objectContaining({ cadence: "periodic", scheduled_at: expect.any(String) }), expect.objectContaining({ signal: expect.any(String), source: "loop:examples.hello/phase:learn" })]));
    expect(causes.every((c) => c !== undefined)).toBe(true);
    expect(events.at(-1)).toMatchObject({ type: "run.summary", stopped: "duration", exit_code: 0, signals_dropped: 0 });
  });

  it("refuses an invalid manifest with positioned diagnostics and exit 1, running nothing", () => {
    const dir = mkdtempSync(join(tmpdir(), "pulse-run-"));
    const file = join(dir, "bad.yaml");
    writeFileSync(file, "loop_id: bad\nversion: '0.1'\nphases: []\n");
    const r = runBin("pulse", ["run", file, "--once"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/bad\.yaml:\d+:\d+: error: /);
    expect(r.stdout).not.toMatch(/iteration/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it("--once gives an unreachable receiver --stop-timeout, then drops its signal, says so and exits 1", () => {
    const args = ["run", "manifests/graphonomous.continual_learning.yaml", "--once", "--no-color", "--stop-timeout", "300ms"];
    // Port 9 (discard) is closed on loopback: every send is refused, and at-least-once retries.
    const down = runBin("pulse", [...args, "--route", "prism.benchmark=http://127.0.0.1:9"]);
    expect(down.code).toBe(1);
    expect(down.stdout).toMatch(/signal outcome_to_prism to prism\.benchmark: dropped \(stopped\)/);
    expect(down.stdout).toMatch(/stop: 300 ms passed with work left: 1 undelivered signal\(s\) dropped/);
    // The near miss: the same run with the receiving loop in the process delivers and exits 0.
    const up = runBin("pulse", [...args, "manifests/prism.benchmark.yaml"]);
    expect(up.code).toBe(0);
    expect(up.stdout).not.toMatch(/dropped/);
  });

  it("answers bad flags with a usage error (exit 2), never a stack trace", () => {
    for (const args of [
      ["--duration", "soon"],
      ["--stop-timeout", "soon"],
      ["--iterations", "-1"],
      ["--iterations", "0"],
      ["--listen", "http"],
      ["--listen", "99999"],
      ["--route", "nourl"],
      ["--bogus"],
      ["--once", "--iterations", "2"],
      ["--once", "--no-kickoff"],
    ]) {
      const r = runBin("pulse", ["run", "manifests/examples", ...args]);
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.stderr).toMatch(/^pulse( run)?: /m);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    }
    expect(runBin("pulse", ["run", "does-not-exist.yaml", "--once"]).code).toBe(2);
  });

  it("ends quietly when the reader of its output goes away (| head)", () => {
    const r = spawnSync("bash", ["-c", `"${process.execPath}" dist/bin/pulse.mjs run manifests/ --once --json | head -1; echo "exit \${PIPESTATUS[0]}" >&2`], { cwd: ROOT, encoding: "utf8", env: { ...process.env, ...isolatedStore() } });
    expect(r.stdout.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toBe("exit 0\n");
  });
});
