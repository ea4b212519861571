import { describe, expect, it } from "vitest";
import type { ErrorObject } from "ajv";
import { schemaFindings, describePointer } from "../../src/validator/schema-errors.js";
import { validateValue } from "../../src/validator/validate.js";
import { baseManifest } from "../helpers/manifests.js";

const error = (keyword: string, instancePath: string, params: Record<string, unknown>, extra: Partial<ErrorObject> = {}): ErrorObject =>
  ({ keyword, instancePath, schemaPath: `#/${keyword}`, params, ...extra }) as ErrorObject;

describe("schema error mapping", () => {
  it("names places the way people write them", () => {
    expect(describePointer("")).toBe("the manifest");
    expect(describePointer("/phases/2/timeout_ms")).toBe("phases[2].timeout_ms");
    expect(describePointer("/cadence/params/a~1b")).toBe("cadence.params.a/b");
  });

  it("maps ranges, lengths, formats and unknown keywords", () => {
    const doc = { a: { n: 0, s: "", t: "yesterday" } };
    const findings = schemaFindings(
      [
        error("minimum", "/a/n", { comparison: ">=", limit: 1 }),
        error("minLength", "/a/s", { limit: 1 }),
        error("format", "/a/t", { format: "date-time" }),
        error("uniqueItems", "/a", {}, { message: "must NOT have duplicate items" }),
      ],
      doc,
    );
    expect(findings.map((f) => [f.rule, f.message])).toEqual([
      ["schema/range", "a.n must be >= 1; found number 0"],
      ["schema/length", "a.s must not be empty"],
      ["schema/format", 'a.t must be a valid date-time; found the string "yesterday"'],
      ["schema/invalid", "a must NOT have duplicate items"],
    ]);
  });

  it("drops if/then noise and keeps the then-branch's finding", () => {
    const findings = schemaFindings([error("if", "/phases/0", { failingKeyword: "then" }), error("required", "/phases/0", { missingProperty: "custom_kind" }, { schemaPath: "#/$defs/phase/then/required" })], {
      phases: [{ id: "x", kind: "custom" }],
    });
    expect(findings.map((f) => f.rule)).toEqual(["schema/required"]);
  });

  it("reports real range and format violations from the published shape", () => {
    const m = baseManifest();
    m.phases[0].max_retries = -1;
    m.$schema = "not a uri";
    const rules = validateValue(m).diagnostics.map((d) => d.rule);
    expect(rules).toContain("schema/range");
    expect(rules).toContain("schema/format");
    const ok = baseManifest();
    ok.phases[0].max_retries = 0;
    ok.phases[0].on_failure = "retry";
    ok.$schema = "https://opensentience.org/schemas/pulse-loop-manifest.v0.1.json";
    expect(validateValue(ok).diagnostics).toEqual([]);
  });
});
