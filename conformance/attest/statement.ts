/**
 * The in-toto Statement v1 that a conformance attestation signs
 * (https://github.com/in-toto/attestation/blob/main/spec/v1/statement.md). Its subjects are the
 * report file and the runtime artifact, by sha256; its predicate repeats what a policy decides
 * on (verdict, certification, versions) so a verifier need not trust an unsigned report.
 */
import { createHash, type KeyObject } from "node:crypto";
import { isDeepStrictEqual } from "node:util";
import type { ConformanceReport, RunSettings, Summary, TestName, TestStatus, Verdict } from "../report/types.js";
import { signEnvelope, type DsseEnvelope } from "./dsse.js";

export const STATEMENT_TYPE = "https://in-toto.io/Statement/v1";
export const PREDICATE_TYPE = "https://pulse.opensentience.org/conformance/v0.1";
export const PAYLOAD_TYPE = "application/vnd.in-toto+json";
export const REPORT_SUBJECT = "conformance-report.json";

export interface Subject {
  name: string;
  digest: { sha256: string };
}

export interface ConformancePredicate {
  verdict: Verdict;
  pulse_version: string;
  runtime_name: string;
  runtime_version: string;
  suite_version: string;
  suite_digest: string;
  settings: RunSettings;
  summary: Summary;
  test_results: { number: number; name: TestName; status: TestStatus }[];
  certification: boolean;
}

export interface ConformanceStatement {
  _type: typeof STATEMENT_TYPE;
  /** [report, runtime], in that order. */
  subject: Subject[];
  predicateType: typeof PREDICATE_TYPE;
  predicate: ConformancePredicate;
}

export function sha256Hex(bytes: Buffer): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** "sha256:<hex>" → "<hex>" (lowercase), undefined when it is not that form. */
export function sha256Of(digest: string): string | undefined {
  const m = /^sha256:([0-9a-fA-F]{64})$/.exec(digest);
  return m?.[1]?.toLowerCase();
}

export function predicateOf(report: ConformanceReport): ConformancePredicate {
  return {
    verdict: report.verdict,
    pulse_version: report.pulse_version,
    runtime_name: report.runtime_name,
    runtime_version: report.runtime_version,
    suite_version: report.suite_version,
    suite_digest: report.suite_digest,
    settings: report.settings,
    summary: report.summary,
    test_results: report.test_results.map(({ number, name, status }) => ({ number, name, status })),
    certification: report.certification,
  };
}

/**
 * reportBytes must be exactly the bytes written to the report file: the subject digest is of
 * them, and verification hashes the file as it finds it.
 */
export function buildStatement(report: ConformanceReport, reportBytes: Buffer): ConformanceStatement {
  const runtime = sha256Of(report.runtime_digest);
  if (!runtime) throw new Error(`the report's runtime_digest ${JSON.stringify(report.runtime_digest)} is not "sha256:" and 64 hex digits`);
  return {
    _type: STATEMENT_TYPE,
    subject: [
      { name: REPORT_SUBJECT, digest: { sha256: sha256Hex(reportBytes) } },
      { name: report.runtime_name, digest: { sha256: runtime } },
    ],
    predicateType: PREDICATE_TYPE,
    // As it will read back once signed: undefined-valued keys dropped.
    predicate: JSON.parse(JSON.stringify(predicateOf(report))) as ConformancePredicate,
  };
}

const PREDICATE_FIELDS = [
  "verdict",
  "pulse_version",
  "runtime_name",
  "runtime_version",
  "suite_version",
  "suite_digest",
  "settings",
  "summary",
  "certification",
] as const satisfies readonly (keyof ConformancePredicate & keyof ConformanceReport)[];

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * Where a report (parsed JSON, so untrusted in shape) says something other than the statement,
 * one sentence each. Empty when they agree.
 */
export function reportDisagreements(report: unknown, statement: ConformanceStatement): string[] {
  if (!isObject(report)) return ["the report is not a JSON object"];
  const out: string[] = [];
  const show = (v: unknown): string => (v === undefined ? "nothing" : JSON.stringify(v));
  for (const field of PREDICATE_FIELDS) {
    if (!isDeepStrictEqual(report[field], statement.predicate[field])) {
      out.push(`the report's ${field} is ${show(report[field])} but the attestation says ${show(statement.predicate[field])}`);
    }
  }
  const results = Array.isArray(report.test_results)
    ? report.test_results.map((r: unknown) => (isObject(r) ? { number: r.number, name: r.name, status: r.status } : r))
    : report.test_results;
  if (!isDeepStrictEqual(results, statement.predicate.test_results)) {
    out.push("the report's test_results (numbers, names or statuses) differ from the attested ones");
  }
  const runtime = typeof report.runtime_digest === "string" ? sha256Of(report.runtime_digest) : undefined;
  const attested = statement.subject[1]?.digest.sha256;
  if (runtime !== attested) {
    out.push(`the report's runtime_digest is ${show(report.runtime_digest)} but the attestation says sha256:${attested ?? "(none)"}`);
  }
  return out;
}

/** The whole signing step: statement → JSON bytes → DSSE envelope. */
export function attestReport(report: ConformanceReport, reportBytes: Buffer, privateKey: KeyObject, keyid: string): DsseEnvelope {
  const statement = buildStatement(report, reportBytes);
  // Signing a statement the report file would contradict only fails later, at verification.
  let written: unknown;
  try {
    written = JSON.parse(reportBytes.toString("utf8"));
  } catch {
    throw new Error("the report bytes to attest are not JSON");
  }
  const disagreements = reportDisagreements(written, statement);
  if (disagreements.length) throw new Error(`the report bytes do not match the report: ${disagreements.join("; ")}`);
  return signEnvelope(Buffer.from(JSON.stringify(statement), "utf8"), PAYLOAD_TYPE, privateKey, keyid);
}
