/**
 * Issue 4: a periodic cadence of 100 ms on real time, hosted, with a no-op loop: the mean and
 * worst drift of 100 ticks from their scheduled times, beside a bare setTimeout chain that
 * re-arms itself each tick (the drift a naive scheduler accumulates) in the same run.
 */
import { createHost } from "../src/host/index.js";
import { baseManifestFor } from "./fixtures.js";
import { report } from "./measure.js";

const TICKS = 100;
const INTERVAL = 100;

async function hosted(): Promise<number[]> {
  const host = await createHost();
  for (const kind of ["retrieve", "route", "act", "learn"]) host.runtime.handleKind(kind, () => (kind === "act" ? { causal_parent_ids: [] } : kind === "route" ? { decision: "fast" } : {}));
  await host.load(baseManifestFor("bench.periodic", { type: "periodic", params: { interval: `${INTERVAL}ms` } }));
  const fired: number[] = [];
  host.subscribe((e) => {
    if (e.type === "cadence.fired") fired.push(performance.timeOrigin + performance.now());
  });
  const start = performance.timeOrigin + performance.now();
  host.start();
  while (fired.length < TICKS) await new Promise((r) => setTimeout(r, INTERVAL));
  await host.stop();
  // A periodic cadence first fires one interval after the host starts (docs/decisions.md, Hosting).
  return fired.slice(0, TICKS).map((at, i) => at - (start + (i + 1) * INTERVAL));
}

async function naive(): Promise<number[]> {
  const start = performance.timeOrigin + performance.now();
  const fired: number[] = [];
  await new Promise<void>((done) => {
    const tick = () => {
      fired.push(performance.timeOrigin + performance.now());
      if (fired.length < TICKS) setTimeout(tick, INTERVAL);
      else done();
    };
    setTimeout(tick, 0);
  });
  return fired.map((at, i) => at - (start + i * INTERVAL));
}

const stats = (d: number[]) => ({ mean: d.reduce((a, b) => a + Math.abs(b), 0) / d.length, worst: Math.max(...d.map(Math.abs)), last: d[d.length - 1] as number });
const [h, n] = [stats(await hosted()), stats(await naive())];
report({
  title: "Periodic cadence: 100 ticks of 100 ms on real time",
  rows: [
    { name: "hosted periodic cadence: mean drift", value: `${h.mean.toFixed(2)} ms` },
    { name: "hosted periodic cadence: worst tick / last tick", value: `${h.worst.toFixed(2)} ms / ${h.last.toFixed(2)} ms` },
    { name: "naive setTimeout chain: mean drift", value: `${n.mean.toFixed(2)} ms` },
    { name: "naive setTimeout chain: last tick", value: `${n.last.toFixed(2)} ms` },
  ],
  target: "mean drift < 5 ms over 100 ticks",
  met: h.mean < 5,
});
