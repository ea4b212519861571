/** One test of a loop: when it applies to the loop's structure, and what it does. */
import type { TestName } from "../report/types.js";
import type { LoopContext, LoopProfile } from "./context.js";
import type { ManifestValue } from "./subject.js";

export interface LoopTest {
  number: number;
  name: TestName;
  /** What the test exercises on a loop, for --list and the docs. */
  summary: string;
  /** Why the test does not apply to this loop (not_applicable), or undefined when it does. */
  notApplicable(manifest: ManifestValue, profile: LoopProfile): string | undefined;
  run(ctx: LoopContext): Promise<void>;
}

type Phase = { id: string; kind: string; custom_kind?: string; idempotent?: boolean; on_failure?: string; max_retries?: number; invariant?: string };

export const phasesOf = (m: ManifestValue): Phase[] => m.phases as Phase[];

/**
 * The phase to exercise among candidates: the first that completed in the profile, preferring
 * any but a learn phase (which needs an act before it in its iteration).
 */
export function pick(candidates: readonly Phase[], profile: LoopProfile): Phase | undefined {
  const done = candidates.filter((p) => profile.completed.includes(p.id));
  return done.find((p) => p.kind !== "learn") ?? done[0];
}

/** The act a learn phase needs before it: the last act phase before it in phase order. */
export function actBefore(m: ManifestValue, phaseId: string): Phase | undefined {
  const phases = phasesOf(m);
  const at = phases.findIndex((p) => p.id === phaseId);
  return phases.slice(0, Math.max(at, 0)).filter((p) => p.kind === "act").at(-1) ?? phases.find((p) => p.kind === "act");
}
