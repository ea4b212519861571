/**
 * The conformance report: a public contract (schema/conformance/report.v1.json,
 * docs/conformance/report.md). Everything here is data; the harness fills it, the reporters and
 * the attestation read it.
 */

/** The twelve tests of spec §12, numbered and named exactly as there. */
export const SPEC_TESTS = [
  { number: 1, name: "phase_atomicity_under_concurrency" },
  { number: 2, name: "feedback_path_cannot_be_skipped" },
  { number: 3, name: "nesting_wait_until_stable" },
  { number: 4, name: "kappa_routes_to_deliberate" },
  { number: 5, name: "quorum_before_commit" },
  { number: 6, name: "audit_event_per_phase" },
  { number: 7, name: "idempotent_retry_identical" },
  { number: 8, name: "cross_loop_signal_delivery" },
  { number: 9, name: "substrate_unavailable_degrades" },
  { number: 10, name: "multi_tenant_isolation" },
  { number: 11, name: "trace_id_propagates_to_substrates" },
  { number: 12, name: "manifest_validates_against_schema" },
] as const;

export type TestName = (typeof SPEC_TESTS)[number]["name"];

/**
 * passed: every check held and the precondition was exercised. failed: a check did not hold.
 * warned: held, with a soft check outside its tolerance (e.g. slightly late). errored: the test
 * could not run to the end (driver error, timeout). not_tested: the precondition was never
 * exercised (never counted as passed). flaky: repeats disagreed. not_applicable: only in a loop
 * report (`loop` present): the loop lacks the structure the test needs (never counted as passed,
 * and left out of the verdict).
 */
export type TestStatus = "passed" | "failed" | "warned" | "errored" | "not_tested" | "flaky" | "not_applicable";

/** Every status, in the order reports count them. */
export const STATUSES: readonly TestStatus[] = ["passed", "failed", "warned", "errored", "not_tested", "flaky", "not_applicable"];

export type Verdict = "conformant" | "nonconformant" | "incomplete";

export interface Check {
  /** What was checked, one line: "learn before act is rejected with PHASE_ORDER_VIOLATION". */
  description: string;
  /** "pass" | "fail" | "warn". */
  outcome: "pass" | "fail" | "warn";
  expected: unknown;
  observed: unknown;
}

export interface Evidence {
  /** Audit events that matter to the failure (the runtime's own log). */
  audit_events?: unknown[];
  /** Substrate calls observed by the harness's recording substrate. */
  substrate_calls?: unknown[];
  /** The last lines the adapter wrote on stderr. */
  stderr_tail?: string[];
  /** Anything else worth showing (an error, a driver message). */
  notes?: string[];
}

export interface TestResult {
  number: number;
  name: TestName;
  status: TestStatus;
  /** Milliseconds of wall time the test took (all repeats). */
  duration_ms: number;
  checks: Check[];
  /** Present when status is not passed. */
  evidence?: Evidence;
  /** One shell line that reruns this test alone against the same runtime. */
  repro: string;
  /** Statuses of each repeat when --repeat N > 1. */
  repeats?: TestStatus[];
  /** Why the test was not_tested or errored. */
  reason?: string;
}

/**
 * Where runtime_digest came from. adapter: the adapter's hello (runtime.digest). option: the
 * certifier's --runtime-digest. The rest are the harness's stand-ins when neither gave one, and
 * do not identify the runtime: driver-script (the script file the --driver command names),
 * driver-command (the command line itself), attach-url (the runtime's name, version and URL),
 * harness (pulse-conform's own code).
 */
export type RuntimeDigestSource = "adapter" | "option" | "driver-script" | "driver-command" | "attach-url" | "harness";

/** The sources that name the runtime artifact itself: the only ones an attestation may sign. */
export const ARTIFACT_DIGEST_SOURCES: readonly RuntimeDigestSource[] = ["adapter", "option"];

export type EvidenceClass = "recording-substrate" | "driver-fault-injection";

export interface RunSettings {
  seed: number;
  timing: "virtual" | "real";
  repeats: number;
  evidence_class: EvidenceClass;
  /** Tests selected with --only (all twelve when absent). A filtered run is never a certification. */
  only?: number[];
  /** The manifest(s) under test, when the run certified shipped manifests. */
  manifests?: string[];
}

export interface Summary {
  total: number;
  passed: number;
  failed: number;
  warned: number;
  errored: number;
  not_tested: number;
  flaky: number;
  /** Loop reports only (always present there). */
  not_applicable?: number;
}

/**
 * The loop a loop report certifies (`pulse-conform --loop`): its tests ran on pulse's own
 * runtime with the loop's handlers, and only those that apply to its structure were judged.
 */
export interface LoopUnderTest {
  loop_id: string;
  version: string;
  /** The manifest file as given on the command line. */
  manifest: string;
  /** sha256 of the manifest file's bytes. */
  manifest_digest: string;
  /** The handlers module as given with --handlers, or "recording" for pulse's recording handlers. */
  handlers: string;
  /** Other manifests loaded beside it (its inner loops, its connections' targets), by path. */
  companions: string[];
  /** Loops it names that were not given, played by scripted stand-ins, by loop_id. */
  stand_ins: string[];
  /** Its phases that pulse's recording handlers played (all of them without --handlers). */
  recording_phases: string[];
  /** The numbers of the tests that applied to this loop, in order. */
  applied: number[];
}

export interface ConformanceReport {
  report_version: 1;
  pulse_version: string;
  runtime_name: string;
  runtime_version: string;
  /** sha256 of the runtime artifact ("sha256:<hex>"); runtime_digest_source says where it came from. */
  runtime_digest: string;
  /** What runtime_digest is a hash of; only "adapter" and "option" name the runtime artifact itself. */
  runtime_digest_source?: RuntimeDigestSource;
  runtime_language?: string;
  suite_version: string;
  /** sha256 of the suite's own code, so a report names exactly what judged it. */
  suite_digest: string;
  started_at: string;
  finished_at: string;
  settings: RunSettings;
  test_results: TestResult[];
  summary: Summary;
  verdict: Verdict;
  /** True only for a full, unfiltered run of all twelve tests against a runtime (never for a loop report). */
  certification: boolean;
  /** Present in a loop report: the loop certified, and which tests applied to it. */
  loop?: LoopUnderTest;
}
