import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { parseSourceBytes } from "../../src/source/load.js";
import { validateSources, validateValue } from "../../src/validator/validate.js";
import { baseManifest } from "../helpers/manifests.js";

/** Arbitrary values shaped like manifests: the right keys with arbitrary contents. */
const manifestish = fc.record(
  {
    pulse_protocol_version: fc.oneof(fc.constant("0.1"), fc.string(), fc.jsonValue()),
    loop_id: fc.oneof(fc.constant("a.b"), fc.jsonValue()),
    version: fc.jsonValue(),
    phases: fc.oneof(
      fc.array(fc.record({ id: fc.oneof(fc.constantFrom("a", "b", "c"), fc.jsonValue()), kind: fc.oneof(fc.constantFrom("retrieve", "act", "learn", "custom", "route"), fc.jsonValue()), inputs: fc.jsonValue(), outputs: fc.record({ to: fc.oneof(fc.string(), fc.constantFrom("phase:a", "substrate:memory", "x|")) }), signature: fc.string() }, { requiredKeys: [] })),
      fc.jsonValue(),
    ),
    closure: fc.oneof(fc.record({ from_phase: fc.constantFrom("a", "b", "z"), to_phase: fc.jsonValue(), via: fc.string() }, { requiredKeys: [] }), fc.jsonValue()),
    cadence: fc.letrec((tie) => ({
      cadence: fc.record({ type: fc.constantFrom("event", "periodic", "streaming", "idle", "cross_loop_signal", "manual", "bogus"), params: fc.oneof(fc.dictionary(fc.constantFrom("interval", "trigger", "filter", "min_idle_ms", "rate_limit", "from_loop", "__proto__", "constructor"), fc.jsonValue()), fc.jsonValue()), fallback: fc.option(tie("cadence"), { nil: undefined }) }, { requiredKeys: ["type"] }),
    })).cadence,
    nesting: fc.jsonValue(),
    connections: fc.oneof(fc.array(fc.record({ id: fc.jsonValue(), emit_phase: fc.jsonValue(), emit_condition: fc.string(), to_loop: fc.constantFrom("a.b", "c.d") }, { requiredKeys: [] })), fc.jsonValue()),
    substrates: fc.jsonValue(),
    invariants: fc.jsonValue(),
  },
  { requiredKeys: [] },
);

describe("the validator never throws", () => {
  it("on arbitrary JSON values", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(typeof validateValue(value).valid).toBe("boolean");
      }),
      { numRuns: 500 },
    );
  });

  it("on manifest-shaped values, alone and as systems", () => {
    fc.assert(
      fc.property(fc.array(manifestish, { minLength: 1, maxLength: 3 }), (values) => {
        const sources = values.map((v, i) => {
          const r = validateValue(v, `m${i}.json`);
          expect(r.diagnostics.every((d) => d.line >= 1 && d.column >= 1)).toBe(true);
          return r;
        });
        expect(sources).toHaveLength(values.length);
      }),
      { numRuns: 400 },
    );
  });

  it("on arbitrary bytes as JSON or YAML", async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 300 }), fc.constantFrom("m.json", "m.yaml", "m"), async (bytes, name) => {
        const source = await parseSourceBytes(name, bytes);
        const [result] = validateSources([source]);
        expect(result!.file).toBe(name);
      }),
      { numRuns: 500 },
    );
  });

  it("on YAML renderings of mutated manifests", async () => {
    const { stringify } = await import("yaml");
    await fc.assert(
      fc.asyncProperty(manifestish, async (partial) => {
        const text = stringify({ ...baseManifest(), ...partial });
        const source = await parseSourceBytes("m.yaml", new TextEncoder().encode(text));
        const [result] = validateSources([source]);
        for (const d of result!.diagnostics) {
          expect(d.line).toBeGreaterThanOrEqual(1);
          expect(d.endLine * 10000 + d.endColumn).toBeGreaterThan(d.line * 10000 + d.column - 1);
        }
      }),
      { numRuns: 200 },
    );
  });
});
