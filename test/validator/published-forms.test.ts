/**
 * Forms the protocol's published material uses and the published schema accepts: numbers that
 * overflow a double (1e400, YAML .inf), `sha256(canonical_json({…}))` signature recipes and
 * `loop:<id>` endpoints. Accepted, with a warning that says what pulse does with them.
 */
import { describe, expect, it } from "vitest";
import { stringify as toYaml } from "yaml";
import { parseSourceText } from "../../src/source/parse-text.js";
import { validateSources, validateValue } from "../../src/validator/validate.js";
import { baseManifest } from "../helpers/manifests.js";

const yaml = (m: Record<string, unknown>) => JSON.stringify(m, null, 2);
function validateYaml(text: string) {
  return validateSources([parseSourceText("m.yaml", text)])[0]!.diagnostics.map((d) => ({ rule: d.rule, severity: d.severity, line: d.line, column: d.column, message: d.message }));
}
function findings(m: unknown) {
  return validateValue(m, "m.json").diagnostics.map((d) => ({ rule: d.rule, severity: d.severity, pointer: d.pointer, message: d.message }));
}
function mutate(fn: (m: Record<string, any>) => void): Record<string, any> {
  const m = baseManifest();
  fn(m);
  return m;
}

describe("numbers beyond a double", () => {
  // YAML is a superset of JSON: the base manifest as JSON text, with one value replaced.
  const withTimeout = (value: string) => yaml(mutate((m) => (m.phases[0].timeout_ms = 12345))).replace("12345", value);

  it.each(["1e400", ".inf", ".Inf", "+.inf"])("timeout_ms: %s is accepted, with a warning that says pulse runs the phase without a time limit", (value) => {
    const diagnostics = validateYaml(withTimeout(value));
    expect(diagnostics).toHaveLength(1);
    expect(diagnostics[0]).toMatchObject({ rule: "pulse/number-not-finite", severity: "warning" });
    expect(diagnostics[0]!.message).toContain("Infinity");
    expect(diagnostics[0]!.message).toContain("pulse runs the phase without a time limit");
    // Positioned at the value.
    const line = withTimeout(value).split("\n").findIndex((l) => l.includes(value)) + 1;
    expect(diagnostics[0]!.line).toBe(line);
  });

  it("1e400 in JSON is accepted the same way; 1e308 (a finite double) gets no warning at all", () => {
    const json = (v: string) => parseSourceText("m.json", withTimeout(v));
    expect(validateSources([json("1e400")])[0]!.diagnostics.map((d) => d.rule)).toEqual(["pulse/number-not-finite"]);
    expect(validateSources([json("1e308")])[0]!.diagnostics).toEqual([]);
    expect(validateYaml(withTimeout("1e308"))).toEqual([]);
  });

  it("says what pulse does per field: max_retries retries without end, max_inflight has no limit, elsewhere just Infinity", () => {
    const retries = yaml(mutate((m) => Object.assign(m.phases[0], { on_failure: "retry", max_retries: 12345 }))).replace("12345", ".inf");
    expect(validateYaml(retries)[0]!.message).toContain("retries a failing phase without end");
    const params = yaml(mutate((m) => (m.cadence = { type: "manual", params: { rate_limit: "1/s", extra: 12345 } }))).replace("12345", ".inf");
    const extra = validateYaml(params).find((d) => d.rule === "pulse/number-not-finite");
    expect(extra?.message).not.toContain("pulse ");
  });

  it("-.inf and .nan stay schema errors where the schema wants a non-negative integer (as the published schema says)", () => {
    expect(validateYaml(withTimeout("-.inf")).map((d) => [d.rule, d.severity])).toEqual([
      ["schema/range", "error"],
      ["pulse/number-not-finite", "warning"],
    ]);
    expect(validateYaml(withTimeout(".nan")).map((d) => d.rule)).toContain("schema/type");
  });

  it("validateValue keeps Infinity as Infinity (JSON.stringify would have made it null)", () => {
    expect(findings(mutate((m) => (m.phases[0].timeout_ms = Infinity))).map((f) => [f.rule, f.pointer])).toEqual([["pulse/number-not-finite", "/phases/0/timeout_ms"]]);
    expect(findings(mutate((m) => (m.phases[0].timeout_ms = -Infinity))).map((f) => f.rule)).toContain("schema/range");
  });
});

describe("the parsers flag non-finite numbers, so the validator walks for them only then", () => {
  const withTimeout = (value: string) => yaml(mutate((m) => (m.phases[0].timeout_ms = 12345))).replace("12345", value);

  it("JSONC and YAML say whether they read one: 1e400, .inf, -.inf, .nan yes; 1e308 no", () => {
    expect(parseSourceText("m.json", withTimeout("1e400")).nonFinite).toBe(true);
    expect(parseSourceText("m.json", withTimeout("-1e400")).nonFinite).toBe(true);
    expect(parseSourceText("m.json", withTimeout("1e308")).nonFinite).toBe(false);
    for (const v of [".inf", "-.inf", ".nan", "1e400"]) expect(parseSourceText("m.yaml", withTimeout(v)).nonFinite).toBe(true);
    expect(parseSourceText("m.yaml", withTimeout("1e308")).nonFinite).toBe(false);
  });

  it("an .inf reached through a YAML alias or merge key is still reported, at each place it lands", () => {
    const body = toYaml(baseManifest()).replace(/^phases:\n {2}- /m, "phases:\n  - <<: *limits\n    ");
    expect(body).toContain("<<: *limits");
    const text = `x-limits: &limits\n  timeout_ms: .inf\n${body}`;
    expect(parseSourceText("m.yaml", text).nonFinite).toBe(true);
    const diagnostics = validateYaml(text).filter((d) => d.rule === "pulse/number-not-finite");
    expect(diagnostics).toHaveLength(2);
    expect(diagnostics.filter((d) => d.message.includes("pulse runs the phase without a time limit"))).toHaveLength(1);
  });

  it("a source built by hand (no parser's word) is still walked; a flag of false is trusted", () => {
    const parsed = parseSourceText("m.json", withTimeout("1e400"));
    const { nonFinite: _, ...byHand } = parsed;
    expect(validateSources([byHand])[0]!.diagnostics.map((d) => d.rule)).toEqual(["pulse/number-not-finite"]);
    expect(validateSources([{ ...parsed, nonFinite: true }])[0]!.diagnostics.map((d) => d.rule)).toEqual(["pulse/number-not-finite"]);
    const finite = parseSourceText("m.json", withTimeout("1e308"));
    expect(validateSources([{ ...finite, nonFinite: undefined }])[0]!.diagnostics).toEqual([]);
  });

  it("validateValue finds Infinity beside genuine nulls and strings that spell null", () => {
    const m = mutate((m) => {
      m.phases[0].timeout_ms = Infinity;
      m.description = "null is not Infinity";
    });
    expect(findings(m).map((f) => [f.rule, f.pointer])).toEqual([["pulse/number-not-finite", "/phases/0/timeout_ms"]]);
    expect(findings(mutate((m) => (m.description = "no null here"))).map((f) => f.rule)).toEqual([]);
  });
});

describe("signature recipes as published manifests write them", () => {
  const withRecipe = (signature: string) => findings(mutate((m) => (m.phases[0].signature = signature)));

  it("sha256(canonical_json({query, workspace_id})) is accepted, warning that pulse signs with BLAKE3 over those fields", () => {
    const [f, ...rest] = withRecipe("sha256(canonical_json({query, workspace_id}))");
    expect(rest).toEqual([]);
    expect(f).toMatchObject({ rule: "pulse/signature-not-blake3", severity: "warning", pointer: "/phases/0/signature" });
    expect(f!.message).toContain("pulse signs with BLAKE3-256, not sha256");
    expect(f!.message).toContain("inputs narrowed to query, workspace_id");
    expect(f!.message).toContain("blake3:<64 hex>");
  });

  it("names fields the runtime reads from the input although they look like the envelope", () => {
    const [f] = withRecipe("sha256(canonical_json({loop_id, phase_id, inputs}))");
    expect(f!.message).toContain(`"loop_id" and "phase_id" and "inputs" are read as fields of the phase input`);
  });

  it("hash(...) and blake3(...) get no warning; an unknown function is still an error", () => {
    expect(withRecipe("hash(query, workspace_id)")).toEqual([]);
    expect(withRecipe("blake3(canonical_json({query}))")).toEqual([]);
    expect(withRecipe("md5(query)").map((f) => f.rule)).toEqual(["pulse/signature-recipe"]);
    expect(withRecipe("sha256(canonical_json({query})").map((f) => f.rule)).toEqual(["pulse/signature-recipe"]);
  });
});

describe("loop:<id> endpoints", () => {
  it("outputs.to: loop:X with a connection from the same phase to X is accepted silently", () => {
    const m = mutate((m) => {
      m.phases[3].outputs = { to: "loop:other.loop" };
      m.connections = [{ id: "c", emit_phase: "learn", token: "OutcomeSignal", to_loop: "other.loop" }];
    });
    expect(findings(m).filter((f) => f.severity !== "info")).toEqual([]);
  });

  it("outputs.to: loop:X without a connection warns that nothing is sent and names the connection to add", () => {
    const [f] = findings(mutate((m) => (m.phases[3].outputs = { to: "loop:other.loop" })));
    expect(f).toMatchObject({ rule: "pulse/endpoint-loop", severity: "warning", pointer: "/phases/3/outputs/to" });
    expect(f!.message).toContain("add a connection with emit_phase: learn and to_loop: other.loop");
  });

  it("inputs.from: loop:X warns that the phase reads the iteration's input instead", () => {
    const [f] = findings(mutate((m) => (m.phases[0].inputs = { from: "external|loop:other.loop" })));
    expect(f).toMatchObject({ rule: "pulse/endpoint-loop", severity: "warning" });
    expect(f!.message).toContain("gets the iteration's input or the previous phase's output");
  });

  it("a malformed loop id is an endpoint syntax error", () => {
    expect(findings(mutate((m) => (m.phases[3].outputs = { to: "loop:Other" }))).map((f) => [f.rule, f.message])).toEqual([
      ["pulse/endpoint-syntax", 'invalid loop_id "Other" (dotted lowercase, e.g. prism.benchmark)'],
    ]);
  });
});
