/**
 * Issue 29: 50 loops iterating back to back while three browsers watch the studio's live feed
 * (three Server-Sent Events clients in another process, reading everything), beside the same
 * host with no studio at all, interleaved round by round (A, B, A, B…). Throughput is
 * iterations finished per second across the 50 loops; the page's responsiveness is the
 * latency of GET /api/system during the watched rounds.
 */
import { spawn } from "node:child_process";
import { createHost, type Host } from "../src/host/index.js";
import type { Store } from "../src/store/contracts.js";
import { openStore } from "../adapters/store.js";
import { Studio } from "../src/studio/studio.js";
import { StudioServer } from "../src/studio/server.js";
import { Runs } from "../src/studio/runs.js";
import { baseManifestFor } from "./fixtures.js";
import { median, report } from "./measure.js";

const LOOPS = 50;
const ROUND_MS = 2000;
const ROUNDS = 7;
const CLIENTS = 3;

/**
 * A fresh host and store per round: the in-memory store grows with every iteration (its audit
 * trail), so a host reused across rounds would make every later round slower than the one before.
 */
async function freshHost(): Promise<{ host: Host; store: Store; ids: string[]; finished: () => number }> {
  const store = await openStore("memory:");
  const host = await createHost({ store });
  for (const kind of ["retrieve", "route", "act", "learn"]) host.runtime.handleKind(kind, () => (kind === "act" ? { causal_parent_ids: [] } : kind === "route" ? { decision: "fast" } : {}));
  const ids: string[] = [];
  for (let i = 0; i < LOOPS; i++) ids.push((await host.load(baseManifestFor(`bench.studio_${i}`, { type: "manual", params: { interface: "cli" } }))).id);
  let finished = 0;
  host.subscribe((e) => {
    if (e.type === "iteration.finished") finished++;
  });
  return { host, store, ids, finished: () => finished };
}

/** Every loop iterating back to back for `ms`: iterations finished per second. */
async function drive({ host, ids, finished }: Awaited<ReturnType<typeof freshHost>>, ms: number): Promise<number> {
  const end = performance.now() + ms;
  const before = finished();
  const started = performance.now();
  await Promise.all(
    ids.map(async (id) => {
      while (performance.now() < end) {
        await host.trigger(id);
        // A loop with real handlers waits on I/O between iterations; without this the in-memory
        // loops would run as one chain of microtasks and starve every socket (with or without the studio).
        await new Promise((r) => setImmediate(r));
      }
    }),
  );
  return ((finished() - before) * 1000) / (performance.now() - started);
}

/**
 * The browsers: one other process for the whole run (as browsers are), started before the first
 * round so its start-up is in no round. Told a URL on a line, it opens the feed CLIENTS times and
 * asks for the system view every 250 ms; told "stop", it closes them and answers what it read.
 */
const BROWSERS = `
const n = Number(process.argv[1]);
let state;
const rl = require("node:readline").createInterface({ input: process.stdin });
rl.on("line", (line) => {
  if (line !== "stop") {
    const url = line, abort = new AbortController();
    state = { bytes: 0, connected: 0, latencies: [], abort, probing: true };
    const s = state;
    for (let i = 0; i < n; i++) (async () => {
      const res = await fetch(url + "/api/events", { signal: abort.signal });
      s.connected++;
      for await (const chunk of res.body) s.bytes += chunk.length;
    })().catch(() => {});
    (async () => {
      while (s.probing) {
        await new Promise((r) => setTimeout(r, 250));
        if (s.connected < n || !s.probing) continue;
        const t = performance.now();
        await (await fetch(url + "/api/system", { signal: abort.signal })).arrayBuffer();
        s.latencies.push(performance.now() - t);
      }
    })().catch(() => {});
    return;
  }
  state.probing = false;
  state.abort.abort();
  process.stdout.write(JSON.stringify({ bytes: state.bytes, latencies: state.latencies }) + "\\n");
});
`;
const browsers = spawn(process.execPath, ["-e", BROWSERS, String(CLIENTS)], { stdio: ["pipe", "pipe", "inherit"] });
let answers = "";
browsers.stdout.on("data", (d) => (answers += d));
async function browsersAnswer(): Promise<{ bytes: number; latencies: number[] }> {
  while (!answers.includes("\n")) await new Promise((r) => setTimeout(r, 10));
  const line = answers.slice(0, answers.indexOf("\n"));
  answers = answers.slice(answers.indexOf("\n") + 1);
  return JSON.parse(line) as { bytes: number; latencies: number[] };
}

async function plainRound(ms: number): Promise<number> {
  const h = await freshHost();
  await drive(h, 300);
  const rate = await drive(h, ms);
  await h.host.stop();
  await h.store.close();
  return rate;
}

async function watched(ms: number): Promise<{ rate: number; bytes: number; latencies: number[]; cutOff: number }> {
  const h = await freshHost();
  const { host, store } = h;
  const studio = new Studio(host, store, "<svg/>");
  const server = new StudioServer(studio, new Runs([]), { runPollMs: 60_000 });
  const url = await server.listen(0, "127.0.0.1");
  browsers.stdin.write(`${url}\n`);
  while (studio.feed.clients < CLIENTS) await new Promise((r) => setTimeout(r, 20));
  await drive(h, 300);
  const rate = await drive(h, ms);
  browsers.stdin.write("stop\n");
  const seen = await browsersAnswer();
  const cutOff = studio.feed.cutOff;
  await server.close();
  studio.close();
  await host.stop();
  await store.close();
  return { rate, bytes: seen.bytes, latencies: seen.latencies, cutOff };
}

const plain: number[] = [];
const watchedRates: number[] = [];
const latencies: number[] = [];
let bytes = 0;
let cutOff = 0;
const watch = async () => {
  const w = await watched(ROUND_MS);
  watchedRates.push(w.rate);
  latencies.push(...w.latencies);
  bytes += w.bytes;
  cutOff += w.cutOff;
};
await plainRound(1000); // warm-up
// A B B A …: neither configuration always runs first.
for (let r = 0; r < ROUNDS; r++) {
  if (r % 2 === 0) {
    plain.push(await plainRound(ROUND_MS));
    await watch();
  } else {
    await watch();
    plain.push(await plainRound(ROUND_MS));
  }
}

browsers.kill();
const a = median(plain);
const b = median(watchedRates);
const ratio = b / a;
const sorted = [...latencies].sort((x, y) => x - y);
const p95 = sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.95) - 1)] ?? 0;
report({
  title: `Studio: ${LOOPS} loops iterating back to back, with and without ${CLIENTS} SSE clients watching`,
  rows: [
    { name: `throughput without the studio (median of ${ROUNDS} rounds of ${ROUND_MS / 1000} s, a fresh host each)`, value: `${a.toFixed(0)} iterations/s` },
    { name: `throughput with the studio and ${CLIENTS} SSE clients`, value: `${b.toFixed(0)} iterations/s` },
    { name: "ratio (with / without)", value: ratio.toFixed(3) },
    { name: "feed sent to the clients (all rounds)", value: `${(bytes / 1e6).toFixed(1)} MB` },
    { name: "clients cut off for falling behind", value: String(cutOff) },
    { name: "GET /api/system while watched: median / p95", value: `${median(latencies).toFixed(1)} ms / ${p95.toFixed(1)} ms` },
  ],
  target: "throughput with three clients watching within 10% of without (ratio ≥ 0.90); the page answers in < 250 ms (p95)",
  met: ratio >= 0.9 && p95 < 250,
});
