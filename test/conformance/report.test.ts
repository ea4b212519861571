/**
 * The results side of pulse-conform: counting, the verdict rule, the report schema, and the
 * JUnit, Markdown and badge renderings of a report.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormatsMod from "ajv-formats";
import type { FormatsPlugin } from "ajv-formats";
import { badgeOf } from "../../conformance/report/badge.js";
import { formatJunit } from "../../conformance/report/junit.js";
import { formatMarkdown } from "../../conformance/report/markdown.js";
import { CONFORM_EXIT, closingLine, exitCodeOf, resultsLine, summarize, verdictOf } from "../../conformance/report/summary.js";
import { SPEC_TESTS, type ConformanceReport, type TestStatus, type Verdict } from "../../conformance/report/types.js";
import { exampleBlock, readDoc } from "../format/markdown-blocks.js";
import { childrenNamed, parseXml, textOf, type XmlElement } from "../format/xml-check.js";
import { result, sampleReport } from "./sample-report.js";

// ajv-formats is CommonJS; under NodeNext its default import is the module object.
const addFormats: FormatsPlugin =
  (addFormatsMod as unknown as { default?: FormatsPlugin }).default ?? (addFormatsMod as unknown as FormatsPlugin);

const schema = JSON.parse(readFileSync(new URL("../../schema/conformance/report.v1.json", import.meta.url), "utf8")) as Record<string, any>;
const warnings: string[] = [];
const collect = (...args: unknown[]): void => void warnings.push(args.map(String).join(" "));
const ajv = new Ajv2020({ strict: true, allErrors: true, logger: { log: collect, warn: collect, error: collect } });
addFormats(ajv);
const validate = ajv.compile(schema);

const clone = (r: ConformanceReport): Record<string, any> => JSON.parse(JSON.stringify(r));

describe("summary and verdict", () => {
  it("counts each status", () => {
    const results = [result(1), result(2, "failed"), result(3, "warned"), result(4, "errored"), result(5, "not_tested"), result(6, "flaky"), result(7)];
    expect(summarize(results)).toEqual({ total: 7, passed: 2, failed: 1, warned: 1, errored: 1, not_tested: 1, flaky: 1 });
  });

  const all = SPEC_TESTS.map((t) => t.number);
  const rows: [string, Partial<Record<number, TestStatus>>, number[], Verdict][] = [
    ["all twelve passed", {}, all, "conformant"],
    ["a warned test is a pass with a note", { 4: "warned", 9: "warned" }, all, "conformant"],
    ["one failed", { 2: "failed" }, all, "nonconformant"],
    ["one errored", { 7: "errored" }, all, "incomplete"],
    ["one not_tested", { 8: "not_tested" }, all, "incomplete"],
    ["one flaky", { 1: "flaky" }, all, "incomplete"],
    ["eleven tests only", {}, all.slice(0, 11), "incomplete"],
    ["a failed and a not_tested", { 3: "failed", 5: "not_tested" }, all, "nonconformant"],
    ["a failure in a filtered run", { 2: "failed" }, [1, 2], "nonconformant"],
    ["a filtered run that passed", {}, [1, 2], "incomplete"],
    ["a failed, an errored and a flaky", { 1: "failed", 2: "errored", 3: "flaky" }, all, "nonconformant"],
    ["no tests at all", {}, [], "incomplete"],
  ];
  it.each(rows)("%s → %s", (_, statuses, numbers, verdict) => {
    const results = numbers.map((n) => result(n, statuses[n]));
    expect(verdictOf(summarize(results), results)).toBe(verdict);
  });

  it("twelve results that are not the twelve tests are incomplete", () => {
    const duplicated = [...SPEC_TESTS.slice(0, 11).map((t) => result(t.number)), result(1)];
    expect(verdictOf(summarize(duplicated), duplicated)).toBe("incomplete");
    const misnamed = SPEC_TESTS.map((t) => result(t.number));
    misnamed[0] = { ...misnamed[0]!, name: "feedback_path_cannot_be_skipped" };
    expect(verdictOf(summarize(misnamed), misnamed)).toBe("incomplete");
  });

  it("maps verdicts to exit codes 0, 1, 2", () => {
    expect([exitCodeOf("conformant"), exitCodeOf("nonconformant"), exitCodeOf("incomplete")]).toEqual([0, 1, 2]);
    expect(CONFORM_EXIT).toEqual({ conformant: 0, nonconformant: 1, incomplete: 2, driver: 3, usage: 4, verification: 5 });
  });

  it("ends with `N passed, N failed`, warned counted as passed and every non-pass as failed", () => {
    expect(closingLine(sampleReport().summary)).toBe("12 passed, 0 failed");
    expect(closingLine(sampleReport({ 3: "warned" }).summary)).toBe("12 passed, 0 failed");
    expect(closingLine(sampleReport({ 3: "failed", 4: "not_tested", 5: "errored", 6: "flaky" }).summary)).toBe("8 passed, 4 failed");
    expect(closingLine(sampleReport({}, [1, 2, 3]).summary)).toBe("3 passed, 0 failed");
  });

  it("says on the line before which statuses the closing line counts as failed", () => {
    const skeleton = sampleReport({ 1: "failed", 2: "failed", 3: "failed", 4: "errored", 5: "errored", 6: "errored", 7: "errored", 8: "errored", 9: "errored", 10: "not_tested", 11: "not_tested", 12: "not_tested" }).summary;
    expect(resultsLine(skeleton)).toBe("results: 3 failed, 6 errored, 3 not tested (errored and not tested count as failed below)");
    expect(closingLine(skeleton)).toBe("0 passed, 12 failed");
    expect(resultsLine(sampleReport().summary)).toBe("results: 12 passed");
    expect(resultsLine(sampleReport({ 3: "warned", 4: "flaky" }).summary)).toBe("results: 10 passed, 1 warned, 1 flaky (warned counts as passed below; flaky counts as failed below)");
    expect(resultsLine(sampleReport({ 2: "errored", 4: "not_tested", 5: "flaky" }).summary)).toBe("results: 9 passed, 1 errored, 1 not tested, 1 flaky (errored, not tested and flaky count as failed below)");
    expect(resultsLine(summarize([]))).toBe("results: no test ran");
  });

  it("counts not_applicable in a loop report in neither number, and a loop with nothing applied is incomplete", () => {
    const results = SPEC_TESTS.map((t) => result(t.number, t.number <= 4 ? "not_applicable" : "passed"));
    const summary = summarize(results, "loop");
    expect(summary).toMatchObject({ total: 12, passed: 8, not_applicable: 4 });
    expect(closingLine(summary)).toBe("8 passed, 0 failed");
    expect(resultsLine(summary)).toBe("results: 8 passed, 4 not applicable (not applicable is in neither number)");
    expect(verdictOf(summary, results, "loop")).toBe("conformant");
    // The same statuses in a runtime report do not make a runtime conformant.
    expect(verdictOf(summarize(results), results)).toBe("incomplete");
    const none = SPEC_TESTS.map((t) => result(t.number, "not_applicable"));
    expect(verdictOf(summarize(none, "loop"), none, "loop")).toBe("incomplete");
    const failedOne = results.map((r) => (r.number === 7 ? { ...r, status: "failed" as const } : r));
    expect(verdictOf(summarize(failedOne, "loop"), failedOne, "loop")).toBe("nonconformant");
    expect(summarize([result(1)])).not.toHaveProperty("not_applicable");
  });
});

describe("report schema", () => {
  it("compiles in strict mode without warnings, under the $id matching its path", () => {
    expect(warnings).toEqual([]);
    expect(schema.$id).toBe("https://opensentience.org/schemas/conformance/report.v1.json");
    expect(schema.additionalProperties).toBe(false);
  });

  it("enumerates exactly the twelve tests of spec §12, number paired with name", () => {
    expect(schema.$defs.test_result.properties.name.enum).toEqual(SPEC_TESTS.map((t) => t.name));
    const pairs = schema.$defs.spec_test.anyOf.map((b: any) => [b.properties.number.const, b.properties.name.const]);
    expect(pairs).toEqual(SPEC_TESTS.map((t) => [t.number, t.name]));
  });

  it.each([
    ["a conformant report", sampleReport()],
    ["a report with every status and evidence", sampleReport({ 2: "failed", 3: "warned", 4: "errored", 5: "not_tested", 6: "flaky" })],
    ["a filtered run", { ...sampleReport({}, [1, 12]), settings: { seed: 7, timing: "real", repeats: 3, evidence_class: "driver-fault-injection", only: [1, 12] } }],
  ] as [string, ConformanceReport][])("accepts %s", (_, report) => {
    const ok = validate(clone(report));
    expect(validate.errors ?? []).toEqual([]);
    expect(ok).toBe(true);
  });

  const nearMisses: [string, (r: Record<string, any>) => void][] = [
    ["a misspelt test name", (r) => (r.test_results[0].name = "phase_atomicity_under_concurency")],
    ["a number paired with another test's name", (r) => (r.test_results[0].name = "quorum_before_commit")],
    ["no pulse_version", (r) => delete r.pulse_version],
    ["an unknown top-level key", (r) => (r.extra = true)],
    ["a digest that is not sha256:<hex>", (r) => (r.runtime_digest = "md5:abc")],
    ["an unknown status", (r) => (r.test_results[0].status = "skipped")],
    ["a 13th test number", (r) => (r.test_results[0].number = 13)],
    ["report_version 2", (r) => (r.report_version = 2)],
    ["a started_at that is not a date-time", (r) => (r.started_at = "yesterday")],
  ];
  it.each(nearMisses)("rejects %s", (_, spoil) => {
    const report = clone(sampleReport());
    expect(validate(report)).toBe(true);
    spoil(report);
    expect(validate(report)).toBe(false);
  });

  it("accepts a loop report like the docs' (not_applicable, loop section), and keeps not_applicable out of runtime reports", () => {
    const results = SPEC_TESTS.map((t) => (t.number === 5 ? { ...result(5, "not_applicable"), reason: "the loop does not declare the quorum_before_commit invariant" } : result(t.number)));
    const summary = summarize(results, "loop");
    const loop = JSON.parse(exampleBlock(readDoc("conformance/report.md"), "loop-section"));
    const report = { ...clone(sampleReport()), test_results: results, summary, verdict: verdictOf(summary, results, "loop"), certification: false, loop };
    expect(validate(report), JSON.stringify(validate.errors)).toBe(true);
    expect(report.verdict).toBe("conformant");
    expect(loop.applied).toEqual(results.filter((r) => r.status !== "not_applicable").map((r) => r.number));
    // Near misses: the same results without the loop key, or a loop report without its count.
    const { loop: _, ...runtime } = report;
    expect(validate(runtime)).toBe(false);
    const allPassed = results.map((r) => ({ ...r, status: "passed" as const }));
    expect(validate({ ...runtime, summary: summarize(allPassed), test_results: allPassed }), JSON.stringify(validate.errors)).toBe(true);
    const { not_applicable: _count, ...uncounted } = summary;
    expect(validate({ ...report, summary: uncounted })).toBe(false);
  });

  it("accepts the example in docs/conformance/report.md", () => {
    const example = JSON.parse(exampleBlock(readDoc("conformance/report.md"), "report"));
    expect(validate(example), JSON.stringify(validate.errors)).toBe(true);
    expect(example.verdict).toBe(verdictOf(example.summary, example.test_results));
    expect(example.summary).toEqual(summarize(example.test_results));
  });
});

const HOSTILE = `<>&"' ]]> \u0000\u001b[31m\nline two`;

function hostileReport(): ConformanceReport {
  const report = sampleReport({ 2: "failed", 3: "warned", 4: "errored", 5: "not_tested", 6: "flaky" });
  report.runtime_name = `rt ${HOSTILE}`;
  const failed = report.test_results[1]!;
  failed.checks = [
    { description: `first ${HOSTILE}`, outcome: "fail", expected: { code: "PHASE_ORDER_VIOLATION" }, observed: `]]>${HOSTILE}` },
    { description: "second", outcome: "fail", expected: 1, observed: undefined },
    { description: "held", outcome: "pass", expected: true, observed: true },
  ];
  failed.repro = "pulse-conform --only 2 -- sh -c 'echo ``` `x`'";
  failed.evidence = { stderr_tail: [`boom ${HOSTILE}`] };
  report.test_results[3]!.reason = `driver died ${HOSTILE}`;
  report.test_results[4]!.reason = `never reached ${HOSTILE}`;
  return report;
}

describe("JUnit XML", () => {
  const cases = (xml: string): XmlElement[] => {
    const suites = childrenNamed(parseXml(xml), "testsuite");
    expect(suites.map((s) => s.attributes.name)).toEqual(["pulse-conformance"]);
    return childrenNamed(suites[0]!, "testcase");
  };

  it("has one case per test, named `<n> <name>` under classname pulse.conformance", () => {
    const tcs = cases(formatJunit(sampleReport()));
    expect(tcs.map((t) => t.attributes.name)).toEqual(SPEC_TESTS.map((t) => `${t.number} ${t.name}`));
    expect(new Set(tcs.map((t) => t.attributes.classname))).toEqual(new Set(["pulse.conformance"]));
    expect(tcs.every((t) => t.children.length === 0)).toBe(true);
  });

  it("is well-formed with hostile strings, and carries them intact where XML can", () => {
    const xml = formatJunit(hostileReport());
    const root = parseXml(xml);
    expect(root.attributes).toMatchObject({ tests: "12", failures: "2", errors: "1", skipped: "1" });
    const tcs = cases(xml);
    const failure = childrenNamed(tcs[1]!, "failure")[0]!;
    expect(failure.attributes.message).toBe(`first ${HOSTILE.replace("\u0000", "\uFFFD").replace("\u001b", "\uFFFD")} (and 1 more failing check)`);
    const text = textOf(failure);
    expect(text).toContain('expected: {"code":"PHASE_ORDER_VIOLATION"}');
    expect(text).toContain(`observed: ${JSON.stringify(`]]>${HOSTILE}`)}`);
    expect(text).toContain("observed: (nothing)");
    expect(text).not.toContain("held");
    expect(text).toContain("repro: pulse-conform --only 2");
    expect(textOf(childrenNamed(tcs[1]!, "system-err")[0]!)).toContain("boom <>&\"' ]]>");
    expect(childrenNamed(tcs[2]!, "system-out")).toHaveLength(1);
    expect(childrenNamed(tcs[3]!, "error")[0]!.attributes.message).toContain('driver died <>&"\' ]]>');
    expect(childrenNamed(tcs[4]!, "skipped")[0]!.attributes.message).toContain("never reached <>&\"' ]]>");
    expect(childrenNamed(tcs[5]!, "failure")[0]!.attributes).toEqual({ message: "flaky", type: "flaky" });
    const props = childrenNamed(childrenNamed(childrenNamed(root, "testsuite")[0]!, "properties")[0]!, "property");
    expect(props.find((p) => p.attributes.name === "runtime_name")!.attributes.value).toBe(`rt <>&"' ]]> \uFFFD\uFFFD[31m\nline two`);
  });
});

describe("Markdown", () => {
  it("shows the header, a row per test, and no sections when all passed", () => {
    const md = formatMarkdown(sampleReport());
    expect(md).toContain("# PULSE conformance: pulse-reference 0.1.0\n");
    expect(md).toContain("**Verdict: conformant** (12 passed, 0 failed)");
    expect(md).toContain("| 1 | `phase_atomicity_under_concurrency` | passed | 10 ms |");
    expect(md.split("\n").filter((l) => /^\| \d+ \|/.test(l))).toHaveLength(12);
    expect(md).not.toContain("## ");
  });

  it("has a section per non-passed test with its checks and repro, fenced safely", () => {
    const md = formatMarkdown(hostileReport());
    const sections = md.split("\n").filter((l) => l.startsWith("## "));
    expect(sections).toEqual([
      "## 2 feedback\\_path\\_cannot\\_be\\_skipped: failed",
      "## 3 nesting\\_wait\\_until\\_stable: warned",
      "## 4 kappa\\_routes\\_to\\_deliberate: errored",
      "## 5 quorum\\_before\\_commit: not_tested",
      "## 6 audit\\_event\\_per\\_phase: flaky",
    ]);
    // The repro holds ``` so its block needs a longer fence, which closes only after it.
    const repro = /Rerun it alone:\n\n(`{4,})sh\n(.*)\n\1\n/.exec(md);
    expect(repro?.[2]).toBe("pulse-conform --only 2 -- sh -c 'echo ``` `x`'");
    expect(md).toContain("FAIL first <>&\"' ]]>");
    expect(md).toContain("  expected: {\"code\":\"PHASE_ORDER_VIOLATION\"}");
    expect(md).not.toMatch(/[\u0000\u001b]/);
    expect(md).toContain("# PULSE conformance: rt &lt;&gt;&amp;\"' \\]\\]&gt;");
    expect(md).toContain("**Verdict: nonconformant** (8 passed, 4 failed)");
  });

  it("names the tests a filtered run left out", () => {
    expect(formatMarkdown(sampleReport({}, [1, 2]))).toContain("Not run: 3 `nesting_wait_until_stable`, 4 ");
  });
});

describe("badge", () => {
  it.each([
    [sampleReport(), "conformant 12/12", "brightgreen"],
    [sampleReport({ 1: "warned" }), "conformant 12/12", "brightgreen"],
    [sampleReport({ 1: "failed", 2: "failed", 3: "not_tested" }), "nonconformant 9/12", "red"],
    [sampleReport({ 1: "errored", 2: "not_tested" }), "incomplete 10/12", "yellow"],
    [sampleReport({}, [1, 2, 3]), "incomplete 3/12", "yellow"],
  ] as [ConformanceReport, string, string][])("%#: %s", (report, message, color) => {
    expect(badgeOf(report)).toEqual({ schemaVersion: 1, label: "PULSE v0.1", message, color });
  });

  it("labels the protocol's minor version, not its patch", () => {
    expect(badgeOf({ ...sampleReport(), pulse_version: "0.1.3" }).label).toBe("PULSE v0.1");
  });
});
