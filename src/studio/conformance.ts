/**
 * A `pulse-conform` report opened in the studio: checked against the report's schema
 * (schema/conformance/report.v1.json, shipped in the package) before anything reads it, so a
 * stray JSON file is a 400 that says what is wrong rather than a page of blanks.
 */
import { readFileSync } from "node:fs";
import { packageFile } from "../package-file.js";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { HttpError } from "../serve/rest.js";
import { SPEC_TESTS, type ConformanceReport } from "../../conformance/report/types.js";

let validate: ValidateFunction | undefined;

function validator(): ValidateFunction {
  if (!validate) {
    const ajv = new Ajv2020({ allErrors: true, strict: false });
    (addFormats as unknown as (a: Ajv2020) => void)(ajv);
    validate = ajv.compile(JSON.parse(readFileSync(packageFile(import.meta.url, "schema", "conformance", "report.v1.json"), "utf8")) as object);
  }
  return validate;
}

export interface ConformanceView {
  report: ConformanceReport;
  /** The twelve tests of §12 in order, each with its result when the report has one. */
  tests: { number: number; name: string; result: ConformanceReport["test_results"][number] | null }[];
}

export function conformanceView(body: unknown): ConformanceView {
  const check = validator();
  if (!check(body)) {
    const first = check.errors?.[0];
    throw new HttpError(400, "NOT_A_REPORT", `this is not a pulse-conform report (schema/conformance/report.v1.json): ${first ? `${first.instancePath || "the document"} ${first.message}` : "it does not match"}`);
  }
  const report = body as ConformanceReport;
  const byNumber = new Map(report.test_results.map((t) => [t.number, t]));
  return { report, tests: SPEC_TESTS.map((t) => ({ number: t.number, name: t.name, result: byNumber.get(t.number) ?? null })) };
}
