/**
 * Each token schema accepts the §6 example and rejects, per enum and range, a value just outside
 * what the spec allows, while the value just inside stays accepted.
 */
import fc from "fast-check";
import type { ValidateFunction } from "ajv";
import { describe, expect, it } from "vitest";
import { TOKEN_NAMES, type TokenName } from "../../src/tokens/types.js";
import { compile, isObject, loadSchema, tokenSchemaFile } from "./schemas.js";
import { EXAMPLES } from "./token-examples.js";

const validators = Object.fromEntries(TOKEN_NAMES.map((t) => [t, compile(tokenSchemaFile(t))])) as Record<TokenName, ValidateFunction>;

function check(token: TokenName, doc: unknown): { valid: boolean; errors: Array<{ instancePath: string; keyword: string }> } {
  const validate = validators[token];
  const valid = validate(doc);
  return { valid, errors: (validate.errors ?? []).map((e) => ({ instancePath: e.instancePath, keyword: e.keyword })) };
}

/** A copy of `doc` with the value at a JSON pointer replaced. */
function withValue(doc: unknown, pointer: string, value: unknown): unknown {
  const copy: unknown = structuredClone(doc);
  const keys = pointer.split("/").slice(1);
  const last = keys.pop();
  let node: unknown = copy;
  for (const key of keys) node = (node as Record<string, unknown>)[key];
  if (last === undefined || typeof node !== "object" || node === null) throw new Error(`bad pointer ${pointer}`);
  (node as Record<string, unknown>)[last] = value;
  return copy;
}

describe("token schemas accept the §6 examples", () => {
  it.each([...TOKEN_NAMES])("%s", (token) => {
    expect(check(token, EXAMPLES[token]).errors).toEqual([]);
  });

  it.each([...TOKEN_NAMES])("%s with only its required fields", (token) => {
    const required = loadSchema(tokenSchemaFile(token)).required as string[];
    const example = EXAMPLES[token] as Record<string, unknown>;
    const bare = Object.fromEntries(required.map((k) => [k, example[k]]));
    expect(check(token, bare).valid).toBe(true);
  });
});

describe("token schemas require what a consumer cannot act without", () => {
  const requiredCases = TOKEN_NAMES.flatMap((token) =>
    (loadSchema(tokenSchemaFile(token)).required as string[]).map((field) => [token, field] as const),
  );

  it("every token requires token, version and trace_id, plus the facts named in §6", () => {
    const requiredOf = (t: TokenName): unknown => loadSchema(tokenSchemaFile(t)).required;
    for (const token of TOKEN_NAMES) expect(requiredOf(token)).toEqual(expect.arrayContaining(["token", "version", "trace_id"]));
    expect(requiredOf("OutcomeSignal")).toEqual(expect.arrayContaining(["action_id", "status"]));
    expect(requiredOf("DeliberationResult")).toEqual(expect.arrayContaining(["verdict", "confidence"]));
    expect(requiredOf("TopologyContext")).toEqual(expect.arrayContaining(["max_kappa"]));
    expect(requiredOf("ConsolidationEvent")).toEqual(expect.arrayContaining(["convergence_status"]));
    expect(requiredOf("ReputationUpdate")).toEqual(expect.arrayContaining(["subject_id", "delta"]));
    expect(requiredOf("SurpriseSignal")).toEqual(expect.arrayContaining(["surprise_magnitude", "surprise_kind"]));
  });

  it.each(requiredCases)("%s without %s is rejected", (token, field) => {
    const { [field]: _dropped, ...rest } = EXAMPLES[token] as Record<string, unknown>;
    const result = check(token, rest);
    expect(result.valid).toBe(false);
    expect(result.errors).toContainEqual({ instancePath: "", keyword: "required" });
  });
});

// [token, pointer, value just outside, value just inside, keyword that rejects it]
const nearMisses: Array<[TokenName, string, unknown, unknown, string]> = [
  ["TopologyContext", "/token", "OutcomeSignal", "TopologyContext", "const"],
  ["TopologyContext", "/version", "0.2", "0.1.4", "pattern"],
  ["TopologyContext", "/trace_id", "", "a", "minLength"],
  ["TopologyContext", "/routing", "slow", "fast", "enum"],
  ["TopologyContext", "/sccs/0/routing", "maybe", "fast", "enum"],
  ["TopologyContext", "/max_kappa", -1, 0, "minimum"],
  ["TopologyContext", "/sccs/0/kappa", -0.5, 0, "minimum"],
  ["TopologyContext", "/nodes/0/confidence", 1.01, 1, "maximum"],
  ["TopologyContext", "/nodes/0/confidence", -0.01, 0, "minimum"],
  ["TopologyContext", "/sccs/0/budget/max_iterations", 0, 1, "minimum"],
  ["TopologyContext", "/edges/0/dst", 5, "node_5", "type"],
  ["DeliberationResult", "/confidence", 1.5, 1, "maximum"],
  ["DeliberationResult", "/confidence", -0.1, 0, "minimum"],
  ["DeliberationResult", "/consensus_type", "slow_path", "conflict_path", "enum"],
  ["DeliberationResult", "/dissents/0/weight", 1.2, 0.5, "maximum"],
  ["DeliberationResult", "/evidence_chain_merkle_root", "blake3", "blake3:abc123", "pattern"],
  ["DeliberationResult", "/reasoning_path", "node_1", ["node_1"], "type"],
  ["OutcomeSignal", "/status", "partial_success", "partial", "enum"],
  ["OutcomeSignal", "/status", "timed_out", "timeout", "enum"],
  ["OutcomeSignal", "/timestamp", "2026-04-10T12:00:00", "2026-04-10T12:00:00+02:00", "format"],
  ["OutcomeSignal", "/timestamp", "April 10, 2026", "2026-04-10T12:00:00.5Z", "format"],
  ["OutcomeSignal", "/evidence", "0.94", { value: 0.94 }, "type"],
  ["OutcomeSignal", "/causal_parent_ids/0", 5, "node_5", "type"],
  ["OutcomeSignal", "/action_id", "", "a", "minLength"],
  ["ReputationUpdate", "/subject_type", "user", "scenario", "enum"],
  ["ReputationUpdate", "/source_loop", "deliberatic", "deliberatic.argumentation", "pattern"],
  ["ReputationUpdate", "/delta", "+0.04", -16, "type"],
  ["ConsolidationEvent", "/timescale", "hourly", "glacial", "enum"],
  ["ConsolidationEvent", "/convergence_status", "converged", "diverged", "enum"],
  ["ConsolidationEvent", "/metric_deltas/graph_size", "-12", -12, "type"],
  ["SurpriseSignal", "/surprise_magnitude", 1.0001, 1, "maximum"],
  ["SurpriseSignal", "/surprise_magnitude", -0.1, 0, "minimum"],
  ["SurpriseSignal", "/surprise_kind", "surprising", "other", "enum"],
  ["SurpriseSignal", "/body_subtype", "robot", "motor", "enum"],
  ["SurpriseSignal", "/edge_id", 1.5, 2, "type"],
  ["SurpriseSignal", "/edge_id", -1, 0, "minimum"],
  ["SurpriseSignal", "/evidence", [], {}, "type"],
];

describe("near misses: rejected just outside, accepted just inside", () => {
  it.each(nearMisses)("%s %s = %j rejected, %j accepted", (token, pointer, outside, inside, keyword) => {
    const rejected = check(token, withValue(EXAMPLES[token], pointer, outside));
    expect(rejected.valid).toBe(false);
    expect(rejected.errors).toContainEqual({ instancePath: pointer, keyword });
    expect(check(token, withValue(EXAMPLES[token], pointer, inside)).errors).toEqual([]);
  });

  it("covers every enum of every token schema", () => {
    const enumPointers = (schema: unknown, pointer: string): string[] => {
      if (!isObject(schema)) return [];
      const here = Array.isArray(schema.enum) ? [pointer] : [];
      const props = isObject(schema.properties) ? schema.properties : {};
      const nested = Object.entries(props).flatMap(([k, v]) => enumPointers(v, `${pointer}/${k}`));
      return [...here, ...nested, ...enumPointers(schema.items, `${pointer}/0`)];
    };
    for (const token of TOKEN_NAMES) {
      const covered = nearMisses.filter(([t, , , , kw]) => t === token && kw === "enum").map(([, p]) => p);
      expect(covered, token).toEqual(expect.arrayContaining(enumPointers(loadSchema(tokenSchemaFile(token)), "")));
    }
  });
});

describe("ranges hold for every number, not only the examples", () => {
  const unitInterval: Array<[TokenName, string]> = [
    ["DeliberationResult", "/confidence"],
    ["SurpriseSignal", "/surprise_magnitude"],
    ["TopologyContext", "/nodes/0/confidence"],
    ["DeliberationResult", "/dissents/0/weight"],
  ];

  it.each(unitInterval)("%s %s: every number in [0, 1] is accepted, every other number rejected", (token, pointer) => {
    fc.assert(
      fc.property(fc.double({ min: 0, max: 1, noNaN: true }), (x) => check(token, withValue(EXAMPLES[token], pointer, x)).valid),
    );
    const outside = fc.oneof(
      fc.double({ min: 1, minExcluded: true, max: 1e12, noNaN: true }),
      // -0 is 0 to JSON and to the schema; the first number below zero is -Number.MIN_VALUE.
      fc.double({ min: -1e12, max: -Number.MIN_VALUE, noNaN: true }),
    );
    fc.assert(fc.property(outside, (x) => !check(token, withValue(EXAMPLES[token], pointer, x)).valid));
  });
});

describe("forward compatibility (§16: minor versions only add fields)", () => {
  it("a token carrying a field from a later minor version is accepted", () => {
    expect(check("OutcomeSignal", { ...EXAMPLES.OutcomeSignal, version: "0.1.2", severity: "high" }).valid).toBe(true);
  });

  it("the documented price: a misspelt optional field is not detected", () => {
    const { causal_parent_ids, ...rest } = EXAMPLES.OutcomeSignal;
    expect(check("OutcomeSignal", { ...rest, causal_parents: causal_parent_ids }).valid).toBe(true);
    expect(String(loadSchema(tokenSchemaFile("OutcomeSignal")).description)).toMatch(/misspelt/);
  });

  it("a known field with the wrong shape is still rejected, however many extra fields come along", () => {
    expect(check("OutcomeSignal", { ...EXAMPLES.OutcomeSignal, extra: 1, status: "ok" }).valid).toBe(false);
  });
});
