/**
 * Issue 30: what the guidance sidecar's loop (manifests/coding/guidance-watch.yaml) costs per
 * iteration beside its floor, in the session bench's way, and what `pulse guidance hook` (which
 * claude runs before every tool call) costs as a process.
 *
 * Per iteration: `sidecar.shouldInterrupt()` in process (what the hook asks: one scan iteration
 * under the lock, then the events and the decision), with nothing changed and with guidance.md
 * changed before each call (the write untimed), beside the floor: the same file work done bare
 * (state.json read, the four watched files read and hashed, events.jsonl read), interleaved.
 * Cold start: the hook's fast path and the full program (an attached -C is not the plain form)
 * beside `node -e ''`.
 */
import { writeFileSync } from "node:fs";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { GuidanceSidecar } from "../src/coding/guidance/sidecar.js";
import { snapshotFiles } from "../src/coding/guidance/files.js";
import { readEvents } from "../src/coding/guidance/events.js";
import { readState } from "../src/coding/guidance/state.js";
import { commandMs, median, report } from "./measure.js";

const root = new URL("../../", import.meta.url).pathname;
const ROUNDS = Number(process.env.ROUNDS ?? 7);
const CALLS = 40;
const project = mkdtempSync(join(os.tmpdir(), "pulse-bench-guidance-"));
const sidecar = await GuidanceSidecar.open({ root: project });
sidecar.init();
const paths = sidecar.paths;
let edits = 0;

async function pulseCalls(change: boolean): Promise<number> {
  let ms = 0;
  for (let i = 0; i < CALLS; i++) {
    if (change) writeFileSync(paths.file("guidance.md"), `# Guidance\n\nEdit ${++edits}.\n`);
    const start = performance.now();
    await sidecar.shouldInterrupt();
    ms += performance.now() - start;
  }
  return ms / CALLS;
}

function bareCalls(change: boolean): number {
  let ms = 0;
  for (let i = 0; i < CALLS; i++) {
    if (change) writeFileSync(paths.file("guidance.md"), `# Guidance\n\nEdit ${++edits}.\n`);
    const start = performance.now();
    readState(paths.state);
    snapshotFiles(paths);
    readEvents(paths.events);
    ms += performance.now() - start;
  }
  return ms / CALLS;
}

const samples = { quiet: [] as number[], quietBare: [] as number[], changed: [] as number[], changedBare: [] as number[] };
await pulseCalls(false);
bareCalls(false);
for (let r = 0; r < ROUNDS; r++) {
  samples.quiet.push(await pulseCalls(false));
  samples.quietBare.push(bareCalls(false));
  samples.changed.push(await pulseCalls(true));
  samples.changedBare.push(bareCalls(true));
}
const m = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, median(v)])) as Record<keyof typeof samples, number>;

const bin = join(root, "dist/bin/pulse.mjs");
const cold = commandMs({ node: [process.execPath, "-e", ""], fast: [process.execPath, bin, "guidance", "hook", "pre-tool-use", "-C", project], full: [process.execPath, bin, "guidance", "hook", `-C${project}`, "pre-tool-use"] }, 9, project);
rmSync(project, { recursive: true, force: true });

report({
  title: "Guidance sidecar: an iteration (shouldInterrupt) beside its file floor, and pulse guidance hook's start",
  rows: [
    { name: "iteration, nothing changed: pulse / bare file work, ms", value: `${m.quiet.toFixed(2)} / ${m.quietBare.toFixed(3)} (${(m.quiet / m.quietBare).toFixed(0)}×)` },
    { name: "iteration, guidance.md changed: pulse / bare file work, ms", value: `${m.changed.toFixed(2)} / ${m.changedBare.toFixed(3)} (${(m.changed / m.changedBare).toFixed(0)}×)` },
    { name: "node -e '' / hook (fast path) / hook (full program), ms", value: `${cold.node!.toFixed(0)} / ${cold.fast!.toFixed(0)} / ${cold.full!.toFixed(0)}` },
    { name: "ratio hook fast path / node -e ''; full program / node -e ''", value: `${(cold.fast! / cold.node!).toFixed(2)}×; ${(cold.full! / cold.node!).toFixed(2)}×` },
    { name: "load average when run (2 cores)", value: os.loadavg()[0]!.toFixed(1) },
  ],
  target: "measured and recorded (issue 30: the coding loops' per-iteration overhead); no target of its own",
  met: true,
});
