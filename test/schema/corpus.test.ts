/**
 * A corpus of manifests whose verdict under the published v0.1.1 schema is known. Our schema must
 * give the same verdict on every one (decisions.md, "Compatibility target"), and reject each
 * invalid one for the stated reason: `expected.json` names the instancePath and keyword of the
 * violation each fixture was built to contain.
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import type { ErrorObject } from "ajv";
import { describe, expect, it } from "vitest";
import { MANIFEST_SCHEMA_FILE, PROJECT_ROOT, isObject, loadSchema, readJson, strictAjv } from "./schemas.js";

const CORPUS = join(PROJECT_ROOT, "test/fixtures/schema-corpus");

interface Expectation {
  valid: boolean;
  instancePath?: string;
  keyword?: string;
}

const expected = readJson(join(CORPUS, "expected.json")) as Record<string, Expectation>;
const onDisk = ["valid", "invalid"].flatMap((dir) => readdirSync(join(CORPUS, dir)).map((f) => `${dir}/${f}`)).sort();
const fixture = (file: string): unknown => readJson(join(CORPUS, file));

const { ajv, warnings } = strictAjv();
const validate = ajv.compile(loadSchema(MANIFEST_SCHEMA_FILE));

function verdict(doc: unknown): { valid: boolean; errors: ErrorObject[] } {
  const valid = validate(doc);
  return { valid, errors: validate.errors ?? [] };
}

describe("schema corpus", () => {
  it("the manifest schema compiled in strict mode without warnings", () => {
    expect(warnings).toEqual([]);
  });

  it("has an expectation for every fixture file and a file for every expectation", () => {
    expect(Object.keys(expected).sort()).toEqual(onDisk);
  });

  it("is large enough to mean something: at least 40 manifests, both verdicts, the spec's worked examples", () => {
    expect(onDisk.length).toBeGreaterThanOrEqual(40);
    expect(onDisk.filter((f) => expected[f]?.valid).length).toBeGreaterThanOrEqual(15);
    expect(onDisk.filter((f) => !expected[f]?.valid).length).toBeGreaterThanOrEqual(25);
    expect(onDisk).toEqual(
      expect.arrayContaining([
        "valid/spec-4-graphonomous-continual-learning.json",
        "valid/spec-15-2-prism-benchmark.json",
        "valid/spec-15-3-agentromatic-deliberation.json",
      ]),
    );
  });

  it("keeps every valid fixture valid under its directory and every invalid one explained", () => {
    for (const [file, e] of Object.entries(expected)) {
      expect(file.startsWith(e.valid ? "valid/" : "invalid/"), file).toBe(true);
      if (!e.valid) expect(typeof e.instancePath === "string" && typeof e.keyword === "string", file).toBe(true);
    }
  });

  const valid = onDisk.filter((f) => expected[f]?.valid);
  const invalid = onDisk.filter((f) => expected[f]?.valid === false);

  it.each(valid)("accepts %s", (file) => {
    const { valid: ok, errors } = verdict(fixture(file));
    expect(errors).toEqual([]);
    expect(ok).toBe(true);
  });

  it.each(invalid)("rejects %s for the stated reason", (file) => {
    const e = expected[file];
    const { valid: ok, errors } = verdict(fixture(file));
    expect(ok).toBe(false);
    const reported = errors.map((err) => ({ instancePath: err.instancePath, keyword: err.keyword }));
    expect(reported).toContainEqual({ instancePath: e?.instancePath, keyword: e?.keyword });
  });
});

/** Leaf paths at which two JSON values differ. */
function differences(a: unknown, b: unknown, path = ""): string[] {
  if (isObject(a) && isObject(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    return [...keys].flatMap((k) => differences(a[k], b[k], `${path}/${k}`));
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    return Array.from({ length: Math.max(a.length, b.length) }, (_, i) => differences(a[i], b[i], `${path}/${i}`)).flat();
  }
  return Object.is(a, b) ? [] : [path];
}

describe("near misses: one value apart, opposite verdicts", () => {
  it.each([
    ["protocol-version-0.1.12", "protocol-version-0.10", "/pulse_protocol_version"],
    ["protocol-version-0.1.3", "protocol-version-0.2", "/pulse_protocol_version"],
    ["loop-id-two-single-letter-segments", "loop-id-single-segment", "/loop_id"],
    ["custom-kind-with-custom-kind", "custom-kind-without-custom-kind", "/phases/0/custom_kind"],
    ["max-inflight-1", "max-inflight-0", "/connections/0/max_inflight"],
    ["timeout-ms-zero", "phase-timeout-negative", "/phases/0/timeout_ms"],
    ["max-retries-zero", "phase-max-retries-negative", "/phases/0/max_retries"],
    ["minimal-two-phases", "phases-one", "/phases/1"],
    ["minimal-two-phases", "substrates-memory-number", "/substrates/memory"],
    ["minimal-two-phases", "missing-invariants", "/invariants"],
    ["spec-4-graphonomous-continual-learning", "spec-4-with-phase-typo", "/phases/2/policy_check"],
  ])("valid/%s vs invalid/%s", (good, bad, path) => {
    const accepted = fixture(`valid/${good}.json`);
    const rejected = fixture(`invalid/${bad}.json`);
    const apart = differences(accepted, rejected);
    expect(apart.length).toBeGreaterThan(0);
    expect(apart.filter((p) => !p.startsWith(path))).toEqual([]);
    expect(verdict(accepted).valid).toBe(true);
    expect(verdict(rejected).valid).toBe(false);
  });
});
