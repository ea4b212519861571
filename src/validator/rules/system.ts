/**
 * Checks across manifests validated together (§3.5, §3.6, §8.5, §11): connection and signal
 * targets, nesting agreement and cycles, duplicate loop ids. A reference to a loop that was not
 * loaded is external (info), not an error: systems are often validated a few files at a time.
 */
import type { RelatedLocation } from "../diagnostic.js";
import { asString } from "../access.js";
import type { Finding } from "../finding.js";
import { nestingCycles, type LoopEntry, type ResolvedSystem, type SystemRef } from "../resolver.js";
import { didYouMean, someOf } from "../../grammar/suggest.js";

export type FileReport = (file: string, finding: Finding) => void;

export function checkSystem(system: ResolvedSystem, report: FileReport): void {
  for (const entries of system.byLoopId.values()) {
    if (entries.length < 2) continue;
    const loopId = (entries[0] as LoopEntry).model.loopId;
    for (const dup of entries.slice(1)) {
      report(dup.file, {
        rule: "pulse/duplicate-loop-id",
        path: ["loop_id"],
        message: `loop_id "${loopId}" is also declared by ${(entries[0] as LoopEntry).file}; each loop needs its own id`,
        related: [{ file: (entries[0] as LoopEntry).file, line: 0, column: 0, message: "first declared here" }],
      });
    }
  }

  for (const ref of system.refs) {
    if (ref.role === "connection" || ref.role === "signal_source") {
      const what = ref.role === "connection" ? "connection" : "cross_loop_signal cadence";
      if (ref.status === "external") {
        report(ref.file, { rule: ref.role === "connection" ? "pulse/connection-external" : "pulse/signal-source-external", path: ref.path, message: `${what} refers to loop "${ref.toLoop}", which is not among the validated manifests (treated as external)` });
      } else if (ref.status === "missing-phase" && ref.toPhase !== undefined && ref.target) {
        const phases = someOf(ref.target.model.phaseIndex.keys());
        const f: Finding = {
          rule: ref.role === "connection" ? "pulse/connection-unresolved" : "pulse/signal-source-unresolved",
          path: ref.phasePath ?? ref.path,
          message: `${what} names phase "${ref.toPhase}" of loop "${ref.toLoop}", which has no such phase (phases: ${phases})`,
          related: relatedOf(ref),
        };
        const suggestion = didYouMean(ref.suggestion);
        report(ref.file, suggestion ? { ...f, suggestion } : f);
      }
    }
    if (ref.role === "inner_loop") {
      if (ref.status === "external") {
        report(ref.file, { rule: "pulse/inner-loop-external", path: ref.path, message: `inner loop "${ref.toLoop}" is not among the validated manifests (treated as external)` });
      } else if (ref.target) {
        const parent = asString(ref.target.model.nesting?.parent_loop);
        if (parent !== ref.fromLoop) {
          report(ref.file, {
            rule: "pulse/nesting-disagreement",
            path: ref.path,
            message: `"${ref.fromLoop}" lists "${ref.toLoop}" as an inner loop, but ${ref.target.file} declares parent_loop ${parent === undefined ? "null" : `"${parent}"`}`,
            related: relatedOf(ref),
          });
        }
      }
    }
    if (ref.role === "parent_loop" && ref.target) {
      const listed = ref.target.model.innerLoops.some(({ item }) => asString(item.loop_id) === ref.fromLoop);
      if (!listed) {
        report(ref.file, {
          rule: "pulse/nesting-disagreement",
          path: ref.path,
          message: `parent_loop is "${ref.toLoop}", but ${ref.target.file} does not list "${ref.fromLoop}" among its inner_loops`,
          related: relatedOf(ref),
        });
      }
    }
  }

  for (const cycle of nestingCycles(system)) {
    const first = cycle[0] as string;
    const entry = system.byLoopId.get(first)?.[0];
    if (!entry) continue;
    // Self-nesting inside one manifest is reported by the single-manifest nesting rule.
    if (cycle.length === 2) continue;
    const ref = system.refs.find((r) => r.fromLoop === first && (r.role === "inner_loop" || r.role === "parent_loop"));
    report(entry.file, { rule: "pulse/nesting-cycle", path: ref?.path ?? ["nesting"], message: `loops nest in a cycle: ${cycle.join(" → ")} (§3.6: nesting must be a tree)` });
  }
}

function relatedOf(ref: SystemRef): RelatedLocation[] {
  return ref.target ? [{ file: ref.target.file, line: 0, column: 0, message: `loop ${ref.toLoop}` }] : [];
}
