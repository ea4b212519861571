#!/usr/bin/env node
/**
 * Our runtime as a separate process speaking the driver protocol on stdin/stdout:
 * `pulse-conform --driver "node dist/conformance/adapters/pulse/stdio.js"`. Requests are answered
 * concurrently (tests overlap calls on purpose); stdout carries protocol messages only.
 */
import { createInterface } from "node:readline";
import { PulseAdapter } from "./adapter.js";
import { answer } from "./rpc-server.js";

const adapter = new PulseAdapter();
const inflight = new Set<Promise<void>>();
const lines = createInterface({ input: process.stdin });
lines.on("line", (line) => {
  if (line.trim() === "") return;
  const done = answer(adapter, line).then((response) => {
    process.stdout.write(JSON.stringify(response) + "\n");
    if ((JSON.parse(line) as { method?: string }).method === "shutdown") process.exit(0);
  });
  inflight.add(done);
  void done.finally(() => inflight.delete(done));
});
lines.on("close", () => void Promise.all(inflight).then(() => process.exit(0)));
process.on("uncaughtException", (e) => {
  process.stderr.write(`adapter: ${e.stack ?? e.message}\n`);
});
