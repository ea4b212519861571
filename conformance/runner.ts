/**
 * Runs the suite against one driver and builds the report. Each test runs on a fresh runtime
 * (configure), `repeats` times; repeats that disagree make the test `flaky`. A driver failure
 * (crash, hang, garbage) ends the run: it is thrown to the CLI, never reported as a result.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { DEFAULT_TEST_TIMEOUT_MS, DriverFailure, type Driver } from "./driver/driver.js";
import type { HelloResult, ObservedCall } from "./driver/protocol.js";
import { PROTOCOL_VERSION } from "./driver/protocol.js";
import { TestContext } from "./harness/context.js";
import type { Observer } from "./harness/observer.js";
import { summarize, verdictOf } from "./report/summary.js";
import type { Check, ConformanceReport, Evidence, RuntimeDigestSource, TestResult, TestStatus } from "./report/types.js";
import { SUITE, SUITE_VERSION } from "./suite/index.js";
import type { ConformanceTest } from "./suite/test.js";

export interface RunOptions {
  driver: Driver;
  observer: Observer;
  hello: HelloResult;
  timing: "virtual" | "real";
  repeats: number;
  seed: number;
  only?: number[];
  mutant?: string;
  manifests?: { file: string; value: Record<string, unknown> }[];
  /** The shell line that reruns one test (the CLI knows how it was invoked). */
  repro: (test: ConformanceTest) => string;
  onResult?: (result: TestResult) => void;
  runtimeDigest: string;
  /** Where runtimeDigest came from (report field runtime_digest_source). */
  runtimeDigestSource?: RuntimeDigestSource;
  /** The tests to run (default: the spec's twelve; tests of the runner pass their own). */
  suite?: readonly ConformanceTest[];
  /** Real milliseconds one run of a test may take (default DEFAULT_TEST_TIMEOUT_MS). */
  testTimeoutMs?: number;
}

export async function runTests(o: RunOptions): Promise<TestResult[]> {
  const results: TestResult[] = [];
  for (const test of o.suite ?? SUITE) {
    if (o.only && !o.only.includes(test.number)) continue;
    const result = await runOne(test, o);
    results.push(result);
    o.onResult?.(result);
  }
  return results;
}

async function runOne(test: ConformanceTest, o: RunOptions): Promise<TestResult> {
  const started = performance.now();
  const runs: { status: TestStatus; ctx: TestContext; reason?: string }[] = [];
  for (let i = 0; i < o.repeats; i++) {
    const ctx = new TestContext(o.driver, o.observer, o.timing, o.mutant, o.manifests ?? []);
    try {
      await bounded(test.run(ctx), o.testTimeoutMs ?? DEFAULT_TEST_TIMEOUT_MS, (ms) => new DriverFailure(`test ${test.number} ${test.name} did not finish within ${ms} ms of real time`));
      runs.push({ ctx, ...statusOf(ctx) });
    } catch (e) {
      if (e instanceof DriverFailure) {
        e.during ??= `test ${test.number} ${test.name}${o.repeats > 1 ? ` (run ${i + 1} of ${o.repeats})` : ""}${o.mutant ? ` against mutant ${o.mutant}` : ""}, ${ctx.steps.where()}`;
        throw e;
      }
      runs.push({ status: "errored", ctx, reason: erroredReason(e) });
    }
  }
  const statuses = runs.map((r) => r.status);
  const status: TestStatus = new Set(statuses).size > 1 ? "flaky" : statuses[0]!;
  // Report the first run that shows the problem (or the last one when all agree).
  const shown = runs.find((r) => r.status !== "passed") ?? runs[runs.length - 1]!;
  const result: TestResult = {
    number: test.number,
    name: test.name,
    status,
    duration_ms: Math.round(performance.now() - started),
    checks: shown.ctx.checks,
    repro: o.repro(test),
  };
  if (o.repeats > 1) result.repeats = statuses;
  if (shown.reason) result.reason = shown.reason;
  if (status !== "passed") {
    const tail = o.driver.stderrTail();
    result.evidence = { ...shown.ctx.evidence, ...(tail.length > 0 ? { stderr_tail: tail.slice(-20) } : {}) };
    if (shown.reason) (result.evidence.notes ??= []).push(shown.reason);
    // A test that attached nothing still shows what the substrates saw during its last run.
    if (!result.evidence.substrate_calls && shown === runs[runs.length - 1]) await attachObserved(result.evidence, o.observer);
    if (Object.keys(result.evidence).length === 0) {
      result.evidence.notes = ["nothing to show: no substrate call or audit event was observed during the test, and the adapter wrote nothing on stderr"];
    }
  }
  return result;
}

/** `work`, or the failure `expired` builds once `ms` of real time has passed first. */
async function bounded<T>(work: Promise<T>, ms: number, expired: (ms: number) => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([work, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(expired(ms)), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

/** How a test that ran to its end went: not_tested when its precondition was never exercised or it checked nothing. */
export function statusOf(ctx: { checks: readonly Check[]; notTested: string | undefined }): { status: TestStatus; reason?: string } {
  if (ctx.notTested) return { status: "not_tested", reason: ctx.notTested };
  if (ctx.checks.some((c) => c.outcome === "fail")) return { status: "failed" };
  if (ctx.checks.length === 0) return { status: "not_tested", reason: "the test made no check" };
  return { status: ctx.checks.some((c) => c.outcome === "warn") ? "warned" : "passed" };
}

export function erroredReason(e: unknown): string {
  return `${(e as Error).name === "RuntimeError" ? `${(e as { code?: string }).code}: ` : ""}${(e as Error)?.message ?? String(e)}`;
}

async function attachObserved(evidence: Evidence, observer: Observer): Promise<void> {
  let calls: ObservedCall[];
  try {
    calls = await observer.calls();
  } catch {
    return; // the observer is the failure: the stderr tail and notes say what is known
  }
  if (calls.length === 0) return;
  evidence.substrate_calls = calls.slice(-30);
  const audit = calls.filter((c) => c.slot === "audit" && c.operation === "append_event" && !c.error).map((c) => (c.args as { event?: unknown }).event);
  if (audit.length > 0 && !evidence.audit_events) evidence.audit_events = audit.slice(-30);
}

export function buildReport(o: RunOptions, results: TestResult[], startedAt: Date): ConformanceReport {
  const summary = summarize(results);
  const certification = !o.only && !o.mutant;
  return {
    report_version: 1,
    pulse_version: "0.1",
    runtime_name: o.hello.runtime.name,
    runtime_version: o.hello.runtime.version,
    runtime_digest: o.runtimeDigest,
    ...(o.runtimeDigestSource ? { runtime_digest_source: o.runtimeDigestSource } : {}),
    runtime_language: o.hello.runtime.language,
    suite_version: SUITE_VERSION,
    suite_digest: suiteDigest(),
    started_at: startedAt.toISOString(),
    finished_at: new Date().toISOString(),
    settings: {
      seed: o.seed,
      timing: o.timing,
      repeats: o.repeats,
      evidence_class: o.observer.evidenceClass,
      ...(o.only ? { only: o.only } : {}),
      ...(o.manifests && o.manifests.length > 0 ? { manifests: o.manifests.map((m) => m.file) } : {}),
    },
    test_results: results,
    summary,
    verdict: verdictOf(summary, results),
    certification,
  };
}

export function sha256(bytes: Uint8Array | string): string {
  return `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
}

/** The code that judged the run: this module's file (in the shipped bin, the bundle holding the suite). */
export function suiteDigest(): string {
  try {
    return sha256(readFileSync(fileURLToPath(import.meta.url)));
  } catch {
    return sha256(`pulse-conform suite ${SUITE_VERSION} protocol ${PROTOCOL_VERSION}`);
  }
}
