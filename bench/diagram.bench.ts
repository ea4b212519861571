/** Issue 6: `pulse-diagram manifests/ -o out.svg` as a whole process, beside `node -e ''`. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { commandMs, report } from "./measure.js";

const root = new URL("../../", import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), "pulse-diagram-bench-"));
const t = commandMs(
  {
    node: [process.execPath, "-e", ""],
    svg: [process.execPath, "dist/bin/pulse-diagram.mjs", "manifests/", "-o", join(dir, "out.svg")],
    mermaid: [process.execPath, "dist/bin/pulse-diagram.mjs", "manifests/", "-o", join(dir, "out.mmd")],
  },
  15,
  root,
);
rmSync(dir, { recursive: true, force: true });
report({
  title: "pulse-diagram as a whole process (manifests/, 7 loops)",
  rows: [
    { name: "node -e ''", value: `${t.node!.toFixed(1)} ms` },
    { name: "pulse-diagram manifests/ -o out.svg", value: `${t.svg!.toFixed(1)} ms` },
    { name: "pulse-diagram manifests/ -o out.mmd (no Graphviz)", value: `${t.mermaid!.toFixed(1)} ms` },
    { name: "svg ratio to node -e ''", value: `${(t.svg! / t.node!).toFixed(2)}×` },
  ],
  target: "svg < 1000 ms",
  met: t.svg! < 1000,
});
