/** §3.6, §11: wait modes and their timeouts, and loops that nest themselves. */
import { asString } from "../access.js";
import type { LoopModel } from "../resolver.js";
import type { Report } from "../finding.js";

export function checkNesting(model: LoopModel, report: Report): void {
  const { loopId, nesting } = model;
  if (!nesting) return;
  if (loopId !== undefined && asString(nesting.parent_loop) === loopId) {
    report({ rule: "pulse/nesting-cycle", path: ["nesting", "parent_loop"], message: `the loop names itself ("${loopId}") as its parent_loop` });
  }
  // Only a list of two or more can hold a duplicate.
  const seen = model.innerLoops.length > 1 ? new Map<string, number>() : undefined;
  for (const { item, index } of model.innerLoops) {
        const id = asString(item.loop_id);
    if (id !== undefined && id === loopId) {
      report({ rule: "pulse/nesting-cycle", path: ["nesting", "inner_loops", index, "loop_id"], message: `the loop lists itself ("${id}") as an inner loop` });
    }
    if (id !== undefined && seen) {
      const first = seen.get(id);
      if (first !== undefined) {
        report({ rule: "pulse/duplicate-inner-loop", path: ["nesting", "inner_loops", index, "loop_id"], message: `inner loop "${id}" is already declared at inner_loops[${first}]` });
      } else {
        seen.set(id, index);
      }
    }
    const wait = asString(item.wait);
    const timeout = item.timeout_ms;
    if (wait === "bounded" && timeout === undefined) {
      report({ rule: "pulse/bounded-without-timeout", path: ["nesting", "inner_loops", index, "wait"], message: "wait \"bounded\" needs timeout_ms: how long the outer phase waits before it continues (§11.2)" });
    }
    if (wait !== undefined && wait !== "bounded" && timeout !== undefined) {
      report({ rule: "pulse/timeout-ignored", path: ["nesting", "inner_loops", index, "timeout_ms"], key: true, message: `timeout_ms only applies to wait "bounded"; with wait "${wait}" it is ignored (§11.2)` });
    }
  }
}
