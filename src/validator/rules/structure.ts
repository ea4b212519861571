/**
 * §3.2: a loop must include a retrieve and an act, and its closure must carry a learn or
 * consolidate outcome back to a retrieve. Warnings by default (decisions.md): the spec's own
 * PRISM and AgenTroMatic examples break them; `--strict` makes them errors.
 */
import { asString } from "../access.js";
import type { LoopModel } from "../resolver.js";
import type { Report } from "../finding.js";

export function checkStructure(model: LoopModel, report: Report): void {
  const { phases } = model;
  if (phases.length === 0) return;
  const has = (kind: string): boolean => phases.some((p) => p.kind === kind);
  if (!has("retrieve")) {
    report({ rule: "pulse/missing-retrieve", path: ["phases"], key: true, message: "the loop has no phase of kind \"retrieve\" (§3.2: every loop must read context from a substrate)" });
  }
  if (!has("act")) {
    report({ rule: "pulse/missing-act", path: ["phases"], key: true, message: "the loop has no phase of kind \"act\" (§3.2: every loop must act on the world or a substrate)" });
  }

  const from = asString(model.closure?.from_phase);
  const to = asString(model.closure?.to_phase);
  const fromIndex = phases.findIndex((p) => p.id === from);
  const toPhase = phases.find((p) => p.id === to);
  if (fromIndex < 0 || !toPhase) return; // unknown phases are reported by the reference rules
  let grounded = false;
  for (let i = 0; i <= fromIndex && !grounded; i++) grounded = phases[i]?.kind === "learn" || phases[i]?.kind === "consolidate";
  if (toPhase.kind !== "retrieve") {
    report({
      rule: "pulse/closure-not-grounded",
      path: ["closure", "to_phase"],
      message: `the closure returns to "${to}" (kind ${toPhase.kind ?? "unknown"}), not to a retrieve phase (§3.2: outcomes must flow back into retrieval)`,
    });
  } else if (!grounded) {
    report({
      rule: "pulse/closure-not-grounded",
      path: ["closure", "from_phase"],
      message: `no learn or consolidate phase runs up to the closure's from_phase "${from}", so no outcome flows back to "${to}" (§3.2)`,
    });
  }
}
