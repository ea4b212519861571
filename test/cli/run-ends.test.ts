// `pulse run` on every shipped manifest, alone and together, ends the way its --help says: --once
// after each loop ran once; --iterations 3 after 3 iterations, or at once with exit 4 when nothing
// can trigger another, or it waits (saying what for and when it is due) until Ctrl-C.
import { spawn } from "node:child_process";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { isolatedStore, ROOT, runBin } from "./run-bin.js";

interface Ended {
  code: number | null;
  stdout: string;
  stderr: string;
  interrupted: boolean;
}

/** Runs `pulse run …`; once stdout matches `interruptOn`, sends SIGINT (Ctrl-C) as a user would. */
function run(args: string[], interruptOn?: RegExp): Promise<Ended> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [resolve(ROOT, "dist/bin/pulse.mjs"), "run", ...args, "--no-color"], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...isolatedStore() } });
    let stdout = "";
    let stderr = "";
    let interrupted = false;
    const guard = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString();
      if (interruptOn && !interrupted && interruptOn.test(stdout)) {
        interrupted = true;
        child.kill("SIGINT");
      }
    });
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", fail);
    child.on("close", (code) => {
      clearTimeout(guard);
      done({ code, stdout, stderr, interrupted });
    });
  });
}

const WAITING = /note: waiting for the next trigger \(Ctrl-C stops\):\n/;
const STARVED = /note: nothing can trigger another iteration:\n/;

describe("pulse run ends the way --help says", () => {
  it("--once: every shipped manifest alone, and all together, runs each loop once and exits 0", () => {
    for (const target of ["manifests/agentromatic.deliberation.yaml", "manifests/graphonomous.continual_learning.yaml", "manifests/graphonomous.deliberate.yaml", "manifests/prism.benchmark.yaml", "manifests/examples/hello.loop.yaml", "manifests/examples/idle-consolidation.loop.yaml", "manifests/examples/listener.loop.yaml", "manifests/"]) {
      const r = runBin("pulse", ["run", target, "--once", "--no-color"]);
      expect(r.code, `${target}\n${r.stderr}`).toBe(0);
      expect(r.stdout, target).toMatch(/#1 \(kickoff\)/);
      expect(r.stdout, target).toMatch(/; every loop ran once/);
      expect(r.stdout, target).not.toMatch(/never ran/);
    }
  });

  it("--iterations 3: each shipped manifest alone stops after 3, stops at once with exit 4 when nothing can trigger more, or waits saying for what", async () => {
    const cases: { target: string; expect: "done" | "starved" | "waits"; waitsFor?: RegExp }[] = [
      { target: "manifests/agentromatic.deliberation.yaml", expect: "starved", waitsFor: /agentromatic\.deliberation: event "task_arrival" \(pulse run emits events only at start: -e task_arrival='\{…\}'\)/ },
      { target: "manifests/graphonomous.deliberate.yaml", expect: "starved", waitsFor: /graphonomous\.deliberate: event "deliberation_requested"/ },
      { target: "manifests/examples/listener.loop.yaml", expect: "starved", waitsFor: /examples\.listener: a signal from examples\.hello\/learn \(not in this run: --listen receives signals from another pulse run\)/ },
      { target: "manifests/prism.benchmark.yaml", expect: "waits", waitsFor: /prism\.benchmark: periodic tick \(every weekly\), due \d{4}-\d\d-\d\dT[\d:.]+Z \(in (7d|6d 23h)\)/ },
      { target: "manifests/graphonomous.continual_learning.yaml", expect: "waits", waitsFor: /graphonomous\.continual_learning: idle \(60000 ms without an iteration in the host\), due \S+ \(in (1m|59s)\); or event "agent_query"/ },
      { target: "manifests/examples/idle-consolidation.loop.yaml", expect: "waits", waitsFor: /examples\.idle_consolidation: periodic tick \(every 1m\), due \S+ \(in \d+s\)/ },
      { target: "manifests/examples/hello.loop.yaml", expect: "done" },
    ];
    const ended = await Promise.all(cases.map((c) => run([c.target, "--iterations", "3"], c.expect === "waits" ? WAITING : undefined)));
    for (const [i, c] of cases.entries()) {
      const r = ended[i] as Ended;
      const where = `${c.target}\n${r.stdout}\n${r.stderr}`;
      if (c.expect === "done") {
        expect(r.code, where).toBe(0);
        expect(r.stdout, where).toMatch(/^3 iterations of the 3 asked; stopped after --iterations$/m);
        // examples.hello's fetch reads memory again each tick: the acts wrote to it since.
        expect(r.stdout.match(/#\d \((kickoff|periodic)\) +✓ fetch +✓ decide/g), where).toHaveLength(3);
        expect(r.stdout, where).not.toMatch(/✓ fetch \(replayed\)/);
      } else if (c.expect === "starved") {
        expect(r.code, where).toBe(4);
        expect(r.stdout, where).toMatch(STARVED);
        expect(r.stdout, where).toMatch(c.waitsFor as RegExp);
        expect(r.stdout, where).toMatch(/^1 iteration of the 3 asked; stopped: nothing could trigger another iteration$/m);
        expect(r.stderr, where).toMatch(/^pulse run: --iterations 3: only 1 could start, and nothing can trigger another/m);
      } else {
        expect(r.interrupted, where).toBe(true);
        expect(r.stdout, where).toMatch(c.waitsFor as RegExp);
        expect(r.code, where).toBe(0);
        expect(r.stdout, where).toMatch(/ of the 3 asked; stopped by Ctrl-C$/m);
      }
      expect(r.stderr, where).not.toMatch(/\n\s+at /);
    }
  });

  it("--iterations 3 on every shipped manifest together stops after 3 (exit 0); without --iterations, event-only loops end at once (exit 0), saying why", async () => {
    const together = await run(["manifests/", "--iterations", "3"]);
    expect(together.code, together.stderr).toBe(0);
    expect(together.stdout).toMatch(/^3 iterations of the 3 asked; stopped after --iterations$/m);
    const alone = await run(["manifests/agentromatic.deliberation.yaml"]);
    expect(alone.code).toBe(0);
    expect(alone.stdout).toMatch(STARVED);
    expect(alone.stdout).toMatch(/^1 iteration; stopped: nothing could trigger another iteration$/m);
    // The near miss: with --listen, signals may still come, so the run waits (until Ctrl-C).
    const listening = await run(["manifests/examples/listener.loop.yaml", "--listen", "0"], WAITING);
    expect(listening.interrupted).toBe(true);
    expect(listening.stdout).toMatch(/examples\.listener: a signal from examples\.hello\/learn \(over --listen\)/);
    expect(listening.code).toBe(0);
  });

  it("--no-kickoff waits for cadences only: a weekly loop does not run at start, and the summary says it never ran", async () => {
    const r = await run(["manifests/prism.benchmark.yaml", "--no-kickoff"], WAITING);
    expect(r.interrupted).toBe(true);
    expect(r.stdout).not.toMatch(/#1/);
    expect(r.stdout).toMatch(/^prism\.benchmark +never ran$/m);
    expect(r.code).toBe(0);
  });

  it("-w names the workspace of kickoff iterations too", () => {
    const r = runBin("pulse", ["run", "manifests/examples/hello.loop.yaml", "--once", "-w", "ws_team", "--json"]);
    const started = r.stdout.trim().split("\n").map((l) => JSON.parse(l)).filter((e) => e.type === "iteration.started");
    expect(started.map((e) => [e.workspace_id, e.cause])).toEqual([["ws_team", { trigger: "kickoff" }]]);
  });
});

describe("pulse run --listen with --token", () => {
  it("beyond loopback needs a token (exit 2 without); a sender with the token delivers, one without is refused and says why", async () => {
    const open = runBin("pulse", ["run", "manifests/examples/listener.loop.yaml", "--listen", "0.0.0.0:0", "--once"]);
    expect(open.code).toBe(2);
    expect(open.stderr).toMatch(/--listen 0\.0\.0\.0:0 receives signals from beyond this machine: give it a --token/);
    expect(runBin("pulse", ["run", "manifests/examples", "--token", "short", "--once"]).code).toBe(2);

    const token = "a-token-of-enough-characters";
    const child = spawn(process.execPath, [resolve(ROOT, "dist/bin/pulse.mjs"), "run", "manifests/examples/listener.loop.yaml", "--listen", "127.0.0.1:0", "--no-color"], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...isolatedStore(), PULSE_TOKEN: token } });
    let out = "";
    const url = await new Promise<string>((done, fail) => {
      child.stdout.on("data", (d: Buffer) => {
        out += d.toString();
        const m = /receiving signals at (http:\/\/\S+) \(token required\)/.exec(out);
        if (m) done(m[1] as string);
      });
      child.on("close", () => fail(new Error(`receiver ended: ${out}`)));
    });
    try {
      const route = ["run", "manifests/examples/hello.loop.yaml", "--once", "--no-color", "--stop-timeout", "500ms", "--route", `examples.listener=${url}`];
      const withToken = await run([...route.slice(1), "--token", token]);
      expect(withToken.stdout).toMatch(/⇢ signal outcomes_to_listener to examples\.listener: accepted/);
      expect(withToken.code).toBe(0);
      const without = await run(route.slice(1));
      expect(without.stdout).toMatch(/dropped \(rejected: this receiver needs its token/);
    } finally {
      child.kill("SIGINT");
      await new Promise((r) => child.once("close", r));
    }
    expect(out).toMatch(/examples\.listener +#\d \(signal from examples\.hello\/learn\)/);
  });
});
