/**
 * `pulse-conform verify`: is this attestation signed by this key, about this report and this
 * runtime, and does what it attests satisfy the policy? Every problem found is reported, each as
 * a sentence, except that nothing past a bad signature is looked at: unsigned content is noise.
 */
import type { KeyObject } from "node:crypto";
import { summarize, verdictOf } from "../report/summary.js";
import { SPEC_TESTS, STATUSES, type TestStatus, type Verdict } from "../report/types.js";
import { verifyEnvelope } from "./dsse.js";
import { keyidOf, loadPublicKey } from "./keys.js";
import {
  PAYLOAD_TYPE,
  PREDICATE_TYPE,
  REPORT_SUBJECT,
  STATEMENT_TYPE,
  reportDisagreements,
  sha256Hex,
  sha256Of,
  type ConformanceStatement,
} from "./statement.js";

export interface VerifyPolicy {
  /** The verdict required; "conformant" when absent. */
  verdict?: Verdict;
  /** The suite version required; any when absent. */
  suiteVersion?: string;
  /**
   * Require a full, unfiltered run; true when absent. --allow-uncertified sets it false, and then,
   * unless a verdict is required explicitly, a filtered run whose every test passed is accepted
   * (its verdict is incomplete only because tests were left out).
   */
  requireCertification?: boolean;
  /** The signature that verifies must name the public key's keyid (--require-keyid). */
  requireKeyid?: boolean;
}

export interface VerifyOptions {
  /** The envelope as parsed from JSON (its shape is checked here). */
  envelope: unknown;
  publicKeyPem: string;
  /** The report file's bytes, exactly as read. */
  reportBytes?: Buffer;
  /** "sha256:<hex>" of the runtime artifact the verifier holds. */
  runtimeDigest?: string;
  policy?: VerifyPolicy;
}

export interface VerifyResult {
  ok: boolean;
  failures: string[];
  /** Present once the signature verified and the statement has the expected shape. */
  statement?: ConformanceStatement;
  /** The run was filtered and accepted on the tests it ran (--allow-uncertified). */
  acceptedFiltered?: boolean;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const HEX64 = /^[0-9a-f]{64}$/;
const VERDICTS: readonly string[] = ["conformant", "nonconformant", "incomplete"];
const SUMMARY_KEYS = ["total", "passed", "failed", "warned", "errored", "not_tested", "flaky"];

function isSubject(s: unknown, name?: string): boolean {
  return isObject(s) && typeof s.name === "string" && (name === undefined || s.name === name) && isObject(s.digest) && typeof s.digest.sha256 === "string" && HEX64.test(s.digest.sha256);
}

function isTestOutcome(r: unknown): boolean {
  return isObject(r) && typeof r.number === "number" && SPEC_TESTS.some((t) => t.name === r.name) && typeof r.status === "string" && STATUSES.includes(r.status as TestStatus);
}

/** Why the payload is not a conformance statement; empty when it is one. */
function shapeProblems(s: unknown): string[] {
  if (!isObject(s)) return ["the signed payload is not a JSON object"];
  const out: string[] = [];
  if (s._type !== STATEMENT_TYPE) out.push(`the signed statement's _type is not ${STATEMENT_TYPE}`);
  if (s.predicateType !== PREDICATE_TYPE) out.push(`the signed statement's predicateType is ${JSON.stringify(s.predicateType)}, not ${PREDICATE_TYPE}`);
  const p = s.predicate;
  if (!isObject(p)) return [...out, "the signed statement has no predicate object"];
  const strings = ["pulse_version", "runtime_name", "runtime_version", "suite_version", "suite_digest"];
  for (const key of strings) if (typeof p[key] !== "string") out.push(`the attested ${key} is missing or not a string`);
  if (typeof p.verdict !== "string" || !VERDICTS.includes(p.verdict)) out.push("the attested verdict is missing or unknown");
  if (typeof p.certification !== "boolean") out.push("the attested certification is missing or not true/false");
  if (!isObject(p.settings)) out.push("the attested settings are missing");
  if (!isObject(p.summary) || !SUMMARY_KEYS.every((k) => Number.isInteger((p.summary as Record<string, unknown>)[k]))) out.push("the attested summary is missing or incomplete");
  if (!Array.isArray(p.test_results) || !p.test_results.every(isTestOutcome)) out.push("the attested test_results are missing or malformed");
  const subject = s.subject;
  if (!Array.isArray(subject) || subject.length !== 2 || !isSubject(subject[0], REPORT_SUBJECT) || !isSubject(subject[1], typeof p.runtime_name === "string" ? p.runtime_name : undefined)) {
    out.push(`the signed statement's subjects are not [${REPORT_SUBJECT}, the runtime], each with a sha256 digest`);
  }
  return out;
}

/** The predicate must judge itself: its summary and verdict follow from its test results. */
function consistencyProblems(st: ConformanceStatement): string[] {
  const p = st.predicate;
  const out: string[] = [];
  const summary = summarize(p.test_results);
  if (SUMMARY_KEYS.some((k) => summary[k as keyof typeof summary] !== p.summary[k as keyof typeof summary])) {
    out.push("the attested summary does not count the attested test results");
  }
  const verdict = verdictOf(summary, p.test_results);
  if (verdict !== p.verdict) out.push(`the attested verdict ${p.verdict} does not follow from the attested test results, which make it ${verdict}`);
  return out;
}

function reportProblems(st: ConformanceStatement, reportBytes: Buffer): string[] {
  const attested = st.subject[0]!.digest.sha256;
  const actual = sha256Hex(reportBytes);
  if (actual !== attested) return [`the report file's sha256 is ${actual}, but the attestation is about ${attested}: this is not the attested report, or it was changed`];
  let report: unknown;
  try {
    report = JSON.parse(reportBytes.toString("utf8"));
  } catch {
    return ["the report file is not JSON"];
  }
  return reportDisagreements(report, st);
}

/**
 * A filtered run that passed every test it ran: its verdict is incomplete only because tests were
 * left out, which is what --allow-uncertified accepts in place of conformant.
 */
export function passedWhatItRan(p: ConformanceStatement["predicate"]): boolean {
  return !p.certification && p.verdict === "incomplete" && p.test_results.length > 0 && p.test_results.length < SPEC_TESTS.length && p.test_results.every((r) => r.status === "passed" || r.status === "warned");
}

function policyProblems(st: ConformanceStatement, policy: VerifyPolicy): string[] {
  const p = st.predicate;
  const out: string[] = [];
  const verdict = policy.verdict ?? "conformant";
  const filteredPass = policy.verdict === undefined && policy.requireCertification === false && passedWhatItRan(p);
  if (p.verdict !== verdict && !filteredPass) {
    const why = p.verdict === "incomplete" && policy.requireCertification === false && policy.verdict === undefined ? ": not every test it ran passed" : "";
    out.push(`the attested verdict is ${p.verdict}${why}; the policy requires ${verdict}`);
  }
  if (policy.suiteVersion !== undefined && p.suite_version !== policy.suiteVersion) {
    out.push(`the report was made by suite version ${p.suite_version}; the policy requires ${policy.suiteVersion}`);
  }
  if ((policy.requireCertification ?? true) && !p.certification) {
    out.push("the run was not a certification (a filtered or partial run); accept it only with --allow-uncertified");
  }
  return out;
}

export function verifyAttestation(options: VerifyOptions): VerifyResult {
  let key: KeyObject;
  try {
    key = loadPublicKey(options.publicKeyPem);
  } catch (e) {
    return { ok: false, failures: [(e as Error).message] };
  }
  const envelope = verifyEnvelope(options.envelope, key);
  if (!envelope.ok) return { ok: false, failures: [`the signature does not verify: ${envelope.reason}`] };
  const keyProblems: string[] = [];
  if (options.policy?.requireKeyid) {
    const expected = keyidOf(key);
    if (!envelope.keyids.includes(expected)) {
      const named = envelope.keyids.length === 0 ? "no keyid" : `keyid ${envelope.keyids.map((k) => JSON.stringify(k)).join(", ")}`;
      keyProblems.push(`the signature that verifies names ${named}, not this key's ${expected} (--require-keyid)`);
    }
  }
  if (envelope.payloadType !== PAYLOAD_TYPE) {
    return { ok: false, failures: [`the envelope's payloadType is ${JSON.stringify(envelope.payloadType)}, not ${PAYLOAD_TYPE}`] };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(envelope.payload.toString("utf8"));
  } catch {
    return { ok: false, failures: ["the signed payload is not JSON"] };
  }
  const shape = shapeProblems(parsed);
  if (shape.length) return { ok: false, failures: shape };
  const statement = parsed as ConformanceStatement;

  const failures = [...keyProblems, ...consistencyProblems(statement)];
  if (options.reportBytes) failures.push(...reportProblems(statement, options.reportBytes));
  if (options.runtimeDigest !== undefined) {
    const wanted = sha256Of(options.runtimeDigest);
    const attested = statement.subject[1]!.digest.sha256;
    if (!wanted) failures.push(`the runtime digest ${JSON.stringify(options.runtimeDigest)} is not "sha256:" and 64 hex digits`);
    else if (wanted !== attested) failures.push(`the runtime's sha256 is ${wanted}, but the attestation is about ${attested}: a different runtime`);
  }
  const policy = options.policy ?? {};
  failures.push(...policyProblems(statement, policy));
  const acceptedFiltered = policy.verdict === undefined && policy.requireCertification === false && passedWhatItRan(statement.predicate);
  return { ok: failures.length === 0, failures, statement, ...(acceptedFiltered ? { acceptedFiltered } : {}) };
}
