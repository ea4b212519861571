/**
 * Issue 5: the whole conformance suite as a user runs it, as whole processes: against our
 * runtime in process (target < 10 s) and over the stdio driver protocol (target < 20 s), beside
 * `node -e ''` measured in the same run.
 */
import { commandMs, report } from "./measure.js";

const node = process.execPath;
const cwd = new URL("../..", import.meta.url).pathname;
const ms = commandMs(
  {
    node: [node, "-e", ""],
    inProcess: [node, "dist/bin/pulse-conform.mjs", "--no-color"],
    stdio: [node, "dist/bin/pulse-conform.mjs", "--no-color", "--driver", `"${node}" dist/conformance/adapters/pulse/stdio.js`],
  },
  5,
  cwd,
);
report({
  title: "pulse-conform: the twelve tests, whole process, virtual clock",
  rows: [
    { name: "node -e '' (baseline)", value: `${ms.node!.toFixed(0)} ms` },
    { name: "pulse-conform (in-process runtime)", value: `${ms.inProcess!.toFixed(0)} ms (${(ms.inProcess! / ms.node!).toFixed(1)}× node)` },
    { name: "pulse-conform --driver (stdio adapter)", value: `${ms.stdio!.toFixed(0)} ms (${(ms.stdio! / ms.node!).toFixed(1)}× node)` },
  ],
  target: "in process < 10 s; stdio adapter < 20 s",
  met: ms.inProcess! < 10_000 && ms.stdio! < 20_000,
});
