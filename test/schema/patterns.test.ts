/**
 * The identifier and version patterns decide what users may name their loops and phases. Each is
 * checked here against a plain-code statement of its rule on many generated strings, built from
 * characters that sit near the boundary (uppercase, hyphens, dots, non-ASCII digits).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MANIFEST_SCHEMA_FILE, compile } from "./schemas.js";

const validate = compile(MANIFEST_SCHEMA_FILE);

const minimal = {
  pulse_protocol_version: "0.1",
  loop_id: "acme.minimal",
  version: "0.1.0",
  phases: [
    { id: "fetch", kind: "retrieve" },
    { id: "apply", kind: "act" },
  ],
  closure: { from_phase: "apply", to_phase: "fetch" },
  cadence: { type: "manual" },
  substrates: { memory: null, policy: null, audit: null, auth: null },
  invariants: {},
};

const LOWER = "abcdefghijklmnopqrstuvwxyz";
const DIGITS = "0123456789";
const isWord = (s: string): boolean => s.length > 0 && [...s].every((c) => LOWER.includes(c) || DIGITS.includes(c) || c === "_");
const isDigits = (s: string): boolean => s.length > 0 && [...s].every((c) => DIGITS.includes(c));

/** The rules in words: what the spec and decisions.md say, written without regular expressions. */
const rules = {
  loop_id: (s: string): boolean => s.split(".").length >= 2 && s.split(".").every(isWord),
  phase_id: isWord,
  version: (s: string): boolean => s.split(".").length === 3 && s.split(".").every(isDigits),
  pulse_protocol_version: (s: string): boolean => s === "0.1" || (s.startsWith("0.1.") && isDigits(s.slice(4))),
};

const ID_CHARS = "ab_z09.Ax-é٣ \n";
const VERSION_CHARS = "0119.v-+ ٣\n";

const word = fc.string({ unit: fc.constantFrom(..."abz09_"), minLength: 1, maxLength: 6 });
const digits = fc.string({ unit: fc.constantFrom(...DIGITS), minLength: 1, maxLength: 4 });

const wellFormed = {
  loop_id: fc.array(word, { minLength: 2, maxLength: 4 }).map((segments) => segments.join(".")),
  phase_id: word,
  version: fc.tuple(digits, digits, digits).map((parts) => parts.join(".")),
  pulse_protocol_version: fc.oneof(fc.constant("0.1"), digits.map((patch) => `0.1.${patch}`)),
};

/** One character inserted, replaced or deleted: the typos a user actually makes. */
function typo(base: fc.Arbitrary<string>, alphabet: string): fc.Arbitrary<string> {
  return fc.tuple(base, fc.nat(), fc.constantFrom(...alphabet), fc.constantFrom(0, 1, 2)).map(([s, at, c, op]) => {
    const i = at % (s.length + 1);
    if (op === 0) return s.slice(0, i) + c + s.slice(i);
    if (op === 1) return s.slice(0, i) + c + s.slice(i + 1);
    return s.slice(0, i) + s.slice(i + 1);
  });
}

/** Random strings over boundary characters, well-formed values, and well-formed values with a typo. */
const nearBoundary = (base: fc.Arbitrary<string>, alphabet: string): fc.Arbitrary<string> =>
  fc.oneof(fc.string({ unit: fc.constantFrom(...alphabet), maxLength: 12 }), base, typo(base, alphabet));

const withLoopId = (loop_id: string): unknown => ({ ...minimal, loop_id });
const withPhaseId = (id: string): unknown => ({ ...minimal, phases: [{ id, kind: "retrieve" }, minimal.phases[1]] });
const withVersion = (version: string): unknown => ({ ...minimal, version });
const withProtocol = (pulse_protocol_version: string): unknown => ({ ...minimal, pulse_protocol_version });

describe("identifier and version patterns agree with their rules", () => {
  it.each([
    ["loop_id", withLoopId, rules.loop_id, wellFormed.loop_id, ID_CHARS],
    ["phase id", withPhaseId, rules.phase_id, wellFormed.phase_id, ID_CHARS],
    ["version", withVersion, rules.version, wellFormed.version, VERSION_CHARS],
    ["pulse_protocol_version", withProtocol, rules.pulse_protocol_version, wellFormed.pulse_protocol_version, VERSION_CHARS],
  ] as const)("%s: accepted exactly when the rule holds", (_field, place, rule, base, alphabet) => {
    const seen = { accepted: 0, rejected: 0 };
    fc.assert(
      fc.property(nearBoundary(base, alphabet), (s) => {
        const ok = validate(place(s));
        expect(ok).toBe(rule(s));
        seen[ok ? "accepted" : "rejected"] += 1;
      }),
      { numRuns: 2000 },
    );
    // Both verdicts must actually occur, or the property says nothing about one side.
    expect(seen.accepted).toBeGreaterThan(20);
    expect(seen.rejected).toBeGreaterThan(20);
  });

  it("every dotted lowercase loop_id of two or more segments is accepted", () => {
    fc.assert(fc.property(wellFormed.loop_id, (id) => validate(withLoopId(id))));
  });

  it("every MAJOR.MINOR.PATCH version is accepted, and any 0.1.x protocol patch", () => {
    fc.assert(fc.property(digits, digits, digits, (a, b, c) => validate(withVersion(`${a}.${b}.${c}`))));
    fc.assert(fc.property(digits, (patch) => validate(withProtocol(`0.1.${patch}`))));
  });

  it("rejects every protocol version with a higher minor or major than 0.1", () => {
    fc.assert(
      fc.property(fc.nat(99), fc.integer({ min: 2, max: 99 }), (major, minor) => {
        expect(validate(withProtocol(`${major}.${minor}`))).toBe(false);
        expect(validate(withProtocol(`${major + 1}.1`))).toBe(false);
      }),
    );
  });

  it("the rules themselves read as intended on hand-picked cases", () => {
    expect([rules.loop_id("a.b"), rules.loop_id("ab"), rules.loop_id("a..b"), rules.loop_id("A.b")]).toEqual([true, false, false, false]);
    expect([rules.version("1.2.3"), rules.version("1.2"), rules.version("1.2.3-rc")]).toEqual([true, false, false]);
    expect([rules.pulse_protocol_version("0.1.12"), rules.pulse_protocol_version("0.10"), rules.pulse_protocol_version("0.1.")]).toEqual([true, false, false]);
  });
});
