/** The suite: the twelve tests of spec §12, in their order. */
import { auditPerPhase, feedbackPath, idempotentRetry, phaseAtomicity } from "./phase-tests.js";
import { kappaRouting, nestingUntilStable, quorumBeforeCommit } from "./nesting-tests.js";
import { crossLoopSignal, manifestSchema, multiTenant, substrateUnavailable, tracePropagation } from "./system-tests.js";
import type { ConformanceTest } from "./test.js";

export const SUITE_VERSION = "0.1.0";

export const SUITE: readonly ConformanceTest[] = [
  phaseAtomicity,
  feedbackPath,
  nestingUntilStable,
  kappaRouting,
  quorumBeforeCommit,
  auditPerPhase,
  idempotentRetry,
  crossLoopSignal,
  substrateUnavailable,
  multiTenant,
  tracePropagation,
  manifestSchema,
];
