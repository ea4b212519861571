/**
 * Certifying a loop (`pulse-conform --loop`): the twelve tests of §12 as they apply to one loop,
 * run on pulse's own runtime with the loop's handlers. A first iteration profiles the loop; each
 * test then either says why it does not apply (not_applicable, never passed) or runs on fresh
 * runtimes, and the report says which tests applied.
 */
import type { MutantName } from "../../src/runtime/mutants.js";
import { VERSION } from "../../src/version.js";
import { runtimeArtifactDigest } from "../adapters/pulse/artifact-digest.js";
import { erroredReason, sha256, statusOf, suiteDigest } from "../runner.js";
import { summarize, verdictOf } from "../report/summary.js";
import type { ConformanceReport, TestResult, TestStatus } from "../report/types.js";
import { SUITE_VERSION } from "../suite/index.js";
import { LoopContext, profile, type LoopProfile } from "./context.js";
import { loopAtomicity, loopAudit, loopFeedback, loopIdempotent, loopManifest, loopTenants, loopTrace } from "./phase-tests.js";
import { loopDegrade, loopKappa, loopNesting, loopQuorum, loopSignals } from "./structure-tests.js";
import { loopId, type LoopSubject } from "./subject.js";
import type { LoopTest } from "./test.js";

export const LOOP_SUITE: readonly LoopTest[] = [loopAtomicity, loopFeedback, loopNesting, loopKappa, loopQuorum, loopAudit, loopIdempotent, loopSignals, loopDegrade, loopTenants, loopTrace, loopManifest];

export interface LoopRunOptions {
  subject: LoopSubject;
  repeats: number;
  seed: number;
  only?: number[];
  repro: (test: LoopTest) => string;
  onResult?: (result: TestResult) => void;
  /** The loop tests' self-test: every session runs this broken runtime (the profile does not). */
  mutant?: MutantName;
}

export async function runLoopTests(o: LoopRunOptions): Promise<{ results: TestResult[]; profile: LoopProfile }> {
  const first = await profile(o.subject);
  const results: TestResult[] = [];
  for (const test of LOOP_SUITE) {
    if (o.only && !o.only.includes(test.number)) continue;
    const result = await runOne(test, first, o);
    results.push(result);
    o.onResult?.(result);
  }
  return { results, profile: first };
}

async function runOne(test: LoopTest, first: LoopProfile, o: LoopRunOptions): Promise<TestResult> {
  const base = { number: test.number, name: test.name, repro: o.repro(test) };
  const why = test.notApplicable(o.subject.manifest, first);
  if (why !== undefined) return { ...base, status: "not_applicable", duration_ms: 0, checks: [], reason: why };
  const started = performance.now();
  const runs: { status: TestStatus; ctx: LoopContext; reason?: string }[] = [];
  for (let i = 0; i < o.repeats; i++) {
    const ctx = new LoopContext(o.subject, first, o.mutant);
    try {
      await test.run(ctx);
      runs.push({ ctx, ...statusOf(ctx) });
    } catch (e) {
      runs.push({ status: "errored", ctx, reason: erroredReason(e) });
    } finally {
      await ctx.close().catch(() => undefined);
    }
  }
  const statuses = runs.map((r) => r.status);
  const status: TestStatus = new Set(statuses).size > 1 ? "flaky" : statuses[0]!;
  const shown = runs.find((r) => r.status !== "passed") ?? runs.at(-1)!;
  const result: TestResult = { ...base, status, duration_ms: Math.round(performance.now() - started), checks: shown.ctx.checks };
  if (o.repeats > 1) result.repeats = statuses;
  if (shown.reason) result.reason = shown.reason;
  if (status !== "passed") {
    result.evidence = { ...shown.ctx.evidence };
    if (shown.reason) (result.evidence.notes ??= []).push(shown.reason);
    if (Object.keys(result.evidence).length === 0) result.evidence.notes = ["nothing to show beyond the checks"];
  }
  return result;
}

export function buildLoopReport(o: LoopRunOptions, run: { results: TestResult[]; profile: LoopProfile }, startedAt: Date): ConformanceReport {
  const summary = summarize(run.results, "loop");
  const digest = runtimeArtifactDigest();
  const { subject } = o;
  return {
    report_version: 1,
    pulse_version: "0.1",
    runtime_name: "pulse",
    runtime_version: VERSION,
    runtime_digest: digest ?? sha256(`pulse ${VERSION}`),
    runtime_digest_source: digest ? "adapter" : "harness",
    runtime_language: "typescript",
    suite_version: SUITE_VERSION,
    suite_digest: suiteDigest(),
    started_at: startedAt.toISOString(),
    finished_at: new Date().toISOString(),
    settings: { seed: o.seed, timing: "real", repeats: o.repeats, evidence_class: "recording-substrate", ...(o.only ? { only: o.only } : {}) },
    test_results: run.results,
    summary,
    verdict: verdictOf(summary, run.results, "loop"),
    certification: false,
    loop: {
      loop_id: loopId(subject.manifest),
      version: String(subject.manifest.version),
      manifest: subject.file,
      manifest_digest: subject.digest,
      handlers: subject.handlers.source,
      companions: subject.companions.map((c) => c.file),
      stand_ins: subject.standIns.map((c) => loopId(c.manifest)),
      recording_phases: run.profile.recorded,
      applied: run.results.filter((r) => r.status !== "not_applicable").map((r) => r.number),
    },
  };
}
