/** Issue 2: `pulse-validate manifests/<one>.yaml` as a whole process, beside `node -e ''`. */
import { commandMs, report } from "./measure.js";

const root = new URL("../../", import.meta.url).pathname;
const t = commandMs(
  {
    node: [process.execPath, "-e", ""],
    validate: [process.execPath, "dist/bin/pulse-validate.mjs", "manifests/graphonomous.continual_learning.yaml"],
  },
  30,
  root,
);
const ratio = t.validate! / t.node!;
report({
  title: "pulse-validate as a whole process (manifests/graphonomous.continual_learning.yaml)",
  rows: [
    { name: "node -e ''", value: `${t.node!.toFixed(1)} ms` },
    { name: "pulse-validate manifests/graphonomous.continual_learning.yaml", value: `${t.validate!.toFixed(1)} ms` },
    { name: "ratio", value: `${ratio.toFixed(2)}×` },
  ],
  target: "≤ 2× node -e ''",
  met: ratio <= 2,
});
