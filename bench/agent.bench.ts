/**
 * Issue 30: what the plan → decide → act loop (`pulse agent`, manifests/coding/plan-decide-act.yaml)
 * costs per iteration beside its floor, in the session bench's way. A run is the README demo
 * (examples/agent: the scripted planner and decider, two real actions), in process, on a fresh
 * copy of the home each time (its agent.db, report and action processes included). The floor is
 * the work pulse cannot skip: the same two actions as bare `node` processes (greet's perform.js imported
 * and run; word-count's skill script). Interleaved, medians; the ratio is per run, and per iteration is the run over its
 * iterations.
 */
import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { createAgent } from "../src/coding/agent/api.js";
import { median, report } from "./measure.js";

const root = new URL("../../", import.meta.url).pathname;
const ROUNDS = Number(process.env.ROUNDS ?? 7);
const example = join(root, "examples/agent");

async function pulseRun(): Promise<{ ms: number; iterations: number }> {
  const dir = mkdtempSync(join(os.tmpdir(), "pulse-bench-agent-"));
  try {
    cpSync(join(example, "home"), join(dir, "home"), { recursive: true });
    const start = performance.now();
    const agent = await createAgent({ home: join(dir, "home"), workdir: dir, driver: "scripted", script: join(example, "welcome.json"), env: { PATH: process.env.PATH ?? "" } });
    const run = await agent.ask("Welcome Ada to the team", [], { executionMode: "auto" });
    const out = await run.finished;
    await agent.close();
    const ms = performance.now() - start;
    if (out.status !== "succeeded") throw new Error(`the demo run ended ${out.status}: ${out.reason} ${out.message ?? ""}`);
    // An iteration ends with its progress evaluated (learn), so those count the iterations.
    return { ms, iterations: out.summary.counts.progress_evaluated ?? 0 };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// A script file, as pulse's action runner is, not `node -e` (whose eval costs more than the file).
const scratch = mkdtempSync(join(os.tmpdir(), "pulse-bench-agent-floor-"));
const greetRunner = join(scratch, "greet.mjs");
writeFileSync(greetRunner, `const { Perform } = await import(${JSON.stringify(join(example, "home/actions/greet/perform.js"))}); process.stdout.write(JSON.stringify(await new Perform({ log() {}, files: [] }).run({ who: "Ada" })));\n`);

function bareRun(): number {
  const start = performance.now();
  // greet is a seed 002 action (perform.js), word-count an Agent Skills folder (scripts/count.mjs).
  const runs: string[][] = [
    [greetRunner],
    [join(example, "home/actions/word-count/scripts/count.mjs"), JSON.stringify({ text: "Hello, Ada! Welcome to the team." })],
  ];
  for (const args of runs) {
    // The environment an action gets is an allowlist: the floor gets as little.
    const r = spawnSync(process.execPath, args, { stdio: ["ignore", "pipe", "inherit"], env: { PATH: process.env.PATH ?? "" } });
    if (r.status !== 0) throw new Error(`${args.join(" ").slice(0, 80)} exited ${r.status}`);
  }
  return performance.now() - start;
}

const samples = { pulse: [] as number[], bare: [] as number[] };
let iterations = 0;
await pulseRun();
bareRun();
for (let r = 0; r < ROUNDS; r++) {
  const p = await pulseRun();
  iterations = p.iterations;
  samples.pulse.push(p.ms);
  samples.bare.push(bareRun());
}
rmSync(scratch, { recursive: true, force: true });
const pulse = median(samples.pulse);
const bare = median(samples.bare);
const ratios = samples.pulse.map((p, i) => p / samples.bare[i]!).sort((a, b) => a - b);

report({
  title: "Agent loop (plan → decide → act): the README demo run beside the bare action processes it runs",
  rows: [
    { name: "pulse agent run (scripted, 2 actions), ms", value: pulse.toFixed(1) },
    { name: "the 2 actions as bare node processes, ms", value: bare.toFixed(1) },
    { name: "iterations per run; pulse ms per iteration", value: `${iterations}; ${(pulse / iterations).toFixed(1)}` },
    { name: "ratio pulse / floor (median; rounds' range)", value: `${(pulse / bare).toFixed(2)}× (${ratios[0]!.toFixed(2)}–${ratios.at(-1)!.toFixed(2)}×)` },
    { name: "load average when run (2 cores)", value: os.loadavg()[0]!.toFixed(1) },
  ],
  target: "measured and recorded (issue 30: the coding loops' per-iteration overhead); no target of its own",
  met: true,
});
