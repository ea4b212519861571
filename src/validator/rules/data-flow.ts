/**
 * Where a phase's data can really come from, given the order phases run in (docs/decisions.md):
 * the first iteration starts at phases[0], later ones at closure.to_phase, and an iteration ends
 * after closure.from_phase (or the last phase). `inputs.from: phase:X` naming a phase that runs
 * later gets X's output of the previous iteration, or nothing ever.
 *
 * Also `loop:<id>` endpoints: the runtime moves data between loops through connections only.
 */
import { asString } from "../access.js";
import type { Report } from "../finding.js";
import type { LoopModel } from "../resolver.js";

export function checkDataFlow(model: LoopModel, report: Report): void {
  const last = model.phases.length - 1;
  const to = model.phaseIndex.get(asString(model.closure?.to_phase) ?? "");
  const from = model.phaseIndex.get(asString(model.closure?.from_phase) ?? "");
  // Without a usable closure every iteration runs phases[0] to the last phase.
  const reentry = to ?? 0;
  const end = from ?? last;

  for (const { path, refs } of model.endpoints) {
    if (path[0] !== "phases") continue;
    const index = path[1] as number;
    // phases[index] is that phase unless a non-object entry before it was skipped.
    const listed = model.phases[index];
    const reader = (listed?.index === index ? listed : model.phases.find((p) => p.index === index))?.id ?? `phases[${index}]`;
    const isInput = path[2] === "inputs";
    for (const ref of refs) {
      if (ref.kind === "loop") loopEndpoint(model, ref.loop, reader, isInput, path, ref.offset, ref.length, report);
      if (!isInput || ref.kind !== "phase") continue;
      const source = model.phaseIndex.get(ref.phase);
      if (source === undefined || source < index) continue;
      const at = { path, offset: ref.offset, length: ref.length };
      const itself = source === index ? "its own output" : `the output of "${ref.phase}", which runs after it`;
      if (source > end) {
        report({ ...at, rule: "pulse/input-never-available", message: `"${reader}" reads ${itself}, but "${ref.phase}" never runs: every iteration ends after closure.from_phase "${model.phases[end]?.id ?? ""}" (phases[${end}])` });
      } else if (index < reentry) {
        report({ ...at, rule: "pulse/input-never-available", message: `"${reader}" reads ${itself}, but "${reader}" runs only in the first iteration (later ones start at closure.to_phase "${model.phases[reentry]?.id ?? ""}"), before "${ref.phase}" has run: that data is never available` });
      } else {
        report({ ...at, rule: "pulse/input-from-previous-iteration", message: `"${reader}" reads ${itself}: it gets the previous iteration's output (nothing in the first iteration)` });
      }
    }
  }
}

function loopEndpoint(model: LoopModel, loop: string, reader: string, isInput: boolean, path: readonly (string | number)[], offset: number, length: number, report: Report): void {
  if (!isInput) {
    const delivered = model.connections.some(({ item }) => asString(item.emit_phase) === reader && asString(item.to_loop) === loop);
    if (delivered) return;
    report({ rule: "pulse/endpoint-loop", path, offset, length, message: `pulse sends nothing to loop:${loop} because of outputs.to: only connections carry signals between loops (§3.5); add a connection with emit_phase: ${reader} and to_loop: ${loop}` });
    return;
  }
  report({ rule: "pulse/endpoint-loop", path, offset, length, message: `pulse reads nothing from loop:${loop} here: "${reader}" gets the iteration's input or the previous phase's output; ${loop}'s signals reach this loop through a connection that ${loop} declares (to_loop: ${model.loopId ?? "this loop"})` });
}
