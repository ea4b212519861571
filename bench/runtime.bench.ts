/**
 * Issue 3: the §4 Graphonomous shape (5 phases) with no-op handlers, in-memory substrates, every
 * invariant on, audit and signatures. Phases per second on one core, per-phase overhead beside
 * (a) a bare async-function loop and (b) a naive XState machine invoking one fromPromise actor per
 * phase, and the heap before and after 1,000,000 phases with an audit substrate that only counts.
 */
import { readFileSync } from "node:fs";
import os from "node:os";
import { parse } from "yaml";
import { createActor, createMachine, fromPromise, waitFor } from "xstate";
import { CountingAudit, inMemorySubstrates } from "../adapters/memory/index.js";
import { createRuntime } from "../src/index.js";
import { median, report } from "./measure.js";

const root = new URL("../../", import.meta.url);
const manifest = parse(readFileSync(new URL("manifests/graphonomous.continual_learning.yaml", root), "utf8"));
manifest.invariants = Object.fromEntries(Object.keys(manifest.invariants).map((k) => [k, true]));
delete manifest.nesting; // nesting and connections belong to the hosting benchmarks
delete manifest.connections;

const PHASES = 5;

async function pulseLoop(audit?: CountingAudit) {
  const runtime = await createRuntime();
  const substrates = inMemorySubstrates();
  const loop = await runtime.load(manifest, { substrates: audit ? { ...substrates, audit } : substrates });
  loop.handle("retrieve_ctx", ({ input }) => ({ query: (input as { query: number }).query, k: 5 }));
  loop.handle("route_topology", ({ trace_id }) => ({ decision: "deliberate", result: { token: "DeliberationResult", version: "0.1", trace_id, verdict: "approve", confidence: 0.9 } }));
  loop.handle("act_store", () => ({ causal_parent_ids: [] }));
  loop.handle("learn_outcome", () => ({ learned: true }));
  loop.handle("consolidate_idle", () => ({ consolidated: true }));
  return loop;
}

const handlers = [(i: unknown) => ({ query: i, k: 5 }), () => ({ decision: "fast" }), () => ({ causal_parent_ids: [] }), () => ({ learned: true }), () => ({ consolidated: true })];

async function bareLoop(iterations: number): Promise<void> {
  for (let i = 0; i < iterations; i++) {
    let input: unknown = { query: i };
    for (const h of handlers) input = await h(input);
  }
}

const naiveMachine = createMachine({
  id: "naive",
  initial: "p0",
  context: () => ({ input: null as unknown }),
  states: Object.fromEntries(
    handlers.map((h, i) => [
      `p${i}`,
      {
        invoke: {
          src: fromPromise(async ({ input }: { input: unknown }) => h(input)),
          input: ({ context }: { context: { input: unknown } }) => context.input,
          onDone: { target: i === handlers.length - 1 ? "done" : `p${i + 1}`, actions: ({ context, event }: { context: { input: unknown }; event: { output: unknown } }) => void (context.input = event.output) },
        },
      },
    ]).concat([["done", { type: "final" }] as never]),
  ) as never,
});

async function naiveXState(iterations: number): Promise<void> {
  for (let i = 0; i < iterations; i++) {
    const actor = createActor(naiveMachine).start();
    await waitFor(actor, (s) => s.status === "done");
  }
}

/** CPU time of this process in the last timed() call, ns: on a shared machine it moves less than wall time. */
let lastCpu = 0;

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const cpu = process.cpuUsage();
  const start = process.hrtime.bigint();
  await fn();
  const used = process.cpuUsage(cpu);
  lastCpu = (used.user + used.system) * 1000;
  return Number(process.hrtime.bigint() - start);
}

const ITER = 4000;
const loop = await pulseLoop();
let q = 0;
const runPulse = async (n: number) => {
  for (let i = 0; i < n; i++) await loop.runIteration({ input: { query: q++ } });
};
// Warm up all three, then interleave rounds.
await runPulse(2000);
await bareLoop(2000);
await naiveXState(500);
const samples = { pulse: [] as number[], bare: [] as number[], naive: [] as number[] };
const cpuSamples = { pulse: [] as number[], naive: [] as number[] };
for (let r = 0; r < 7; r++) {
  samples.pulse.push((await timed(() => runPulse(ITER))) / (ITER * PHASES));
  cpuSamples.pulse.push(lastCpu / (ITER * PHASES));
  samples.bare.push((await timed(() => bareLoop(ITER))) / (ITER * PHASES));
  samples.naive.push((await timed(() => naiveXState(ITER / 4))) / ((ITER / 4) * PHASES));
  cpuSamples.naive.push(lastCpu / ((ITER / 4) * PHASES));
}
const perPhase = { pulse: median(samples.pulse), bare: median(samples.bare), naive: median(samples.naive) };
const cpuPerPhase = { pulse: median(cpuSamples.pulse), naive: median(cpuSamples.naive) };
const load = os.loadavg()[0] as number;
const phasesPerSecond = 1e9 / perPhase.pulse;

// Heap over 1,000,000 phases: nothing is kept per phase.
const gc = (globalThis as { gc?: () => void }).gc;
const counting = new CountingAudit();
const heapLoop = await pulseLoop(counting);
const heapRun = async (n: number) => {
  for (let i = 0; i < n; i++) await heapLoop.runIteration({ input: { query: i } });
};
await heapRun(10_000);
gc?.();
const before = process.memoryUsage().heapUsed;
await heapRun(200_000);
gc?.();
const after = process.memoryUsage().heapUsed;
const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MiB`;

report({
  title: "Runtime: §4 shape, 5 phases, no-op handlers, every invariant, audit and signatures",
  rows: [
    { name: "pulse runtime, phases per second (one core)", value: `${Math.round(phasesPerSecond).toLocaleString("en-US")}` },
    { name: "per phase: pulse runtime", value: `${(perPhase.pulse / 1000).toFixed(2)} µs` },
    { name: "per phase: (a) bare async-function loop", value: `${(perPhase.bare / 1000).toFixed(3)} µs` },
    { name: "per phase: (b) naive XState fromPromise per phase", value: `${(perPhase.naive / 1000).toFixed(2)} µs` },
    { name: "pulse ÷ naive XState", value: `${(perPhase.pulse / perPhase.naive).toFixed(2)}×` },
    { name: "CPU of this process per phase: pulse / naive XState", value: `${(cpuPerPhase.pulse / 1000).toFixed(2)} / ${(cpuPerPhase.naive / 1000).toFixed(2)} µs (${(cpuPerPhase.pulse / cpuPerPhase.naive).toFixed(2)}×)` },
    { name: "load average when run (2 cores)", value: load.toFixed(1) },
    { name: `heap after 10,000 iterations (gc ${gc ? "forced" : "unavailable"})`, value: mb(before) },
    { name: "heap after 1,000,000 more phases", value: `${mb(after)} (${after >= before ? "+" : ""}${mb(after - before)})` },
    { name: "audit events counted", value: counting.total.toLocaleString("en-US") },
  ],
  target: "≥ 50,000 phases/s; heap flat over 1,000,000 phases",
  met: phasesPerSecond >= 50_000 && after - before < 8 * 1024 * 1024,
});
