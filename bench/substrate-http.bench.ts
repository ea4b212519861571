/**
 * Issue 3, HTTP substrate adapter: a substrate call over loopback (client → server → in-memory
 * adapter → back) beside a bare fetch → node:http JSON round trip on the same machine, so the
 * protocol's own cost shows without promising any absolute latency. Also counts the TCP
 * connections used, which shows keep-alive at work.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { httpSubstrates } from "../adapters/http/client.js";
import { createSubstrateServer } from "../adapters/http/server.js";
import { inMemorySubstrates } from "../adapters/memory/index.js";
import { median, report } from "./measure.js";

const CALLS = 500;
const ROUNDS = 9;
const ctx = { trace_id: "4bf92f3577b34da6a3ce929d0e0e4736", workspace_id: "bench" };
const args = { agent_id: "agent_7", operation: "act" };

const substrates = createSubstrateServer(inMemorySubstrates());
let connections = 0;
substrates.server.on("connection", () => connections++);
const client = httpSubstrates((await substrates.listen()).url);

const bare = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => {
    JSON.parse(Buffer.concat(chunks).toString("utf8"));
    const body = JSON.stringify({ result: "allow" });
    res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
    res.end(body);
  });
});
await new Promise<void>((resolve) => bare.listen(0, "127.0.0.1", resolve));
const bareUrl = `http://127.0.0.1:${(bare.address() as AddressInfo).port}/`;

const local = inMemorySubstrates();
const runs = {
  bare: async () => {
    const r = await fetch(bareUrl, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ args, context: ctx }) });
    await r.json();
  },
  direct: () => local.auth.permission_check(args, ctx),
  pulse: () => client.auth.permission_check(args, ctx),
};

async function microsPerCall(fn: () => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint();
  for (let i = 0; i < CALLS; i++) await fn();
  return Number(process.hrtime.bigint() - start) / CALLS / 1000;
}

const samples: Record<keyof typeof runs, number[]> = { bare: [], direct: [], pulse: [] };
for (const fn of Object.values(runs)) await microsPerCall(fn);
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, fn] of Object.entries(runs) as Array<[keyof typeof runs, () => Promise<unknown>]>) samples[name].push(await microsPerCall(fn));
}
const t = { bare: median(samples.bare), direct: median(samples.direct), pulse: median(samples.pulse) };
const ratio = t.pulse / t.bare;
await substrates.close();
await new Promise((resolve) => bare.close(resolve));

report({
  title: "HTTP substrate call over loopback (auth.permission_check, sequential, keep-alive)",
  rows: [
    { name: "in-memory adapter, called directly", value: `${t.direct.toFixed(2)} µs` },
    { name: "bare fetch → node:http JSON round trip", value: `${t.bare.toFixed(1)} µs` },
    { name: "pulse client → server → in-memory adapter", value: `${t.pulse.toFixed(1)} µs` },
    { name: "ratio pulse / bare round trip", value: `${ratio.toFixed(2)}×` },
    { name: `TCP connections opened for ${CALLS * (ROUNDS + 1)} pulse calls`, value: String(connections) },
  ],
  target: "≤ 1.5× a bare fetch round trip, connections reused (≤ 2)",
  met: ratio <= 1.5 && connections <= 2,
});
