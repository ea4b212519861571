import { describe, expect, it } from "vitest";
import { parseSourceText } from "../../src/source/parse-text.js";
import { validateSources, validateValue } from "../../src/validator/validate.js";
import { baseManifest } from "../helpers/manifests.js";

const id = (i: number) => `phase_${String(i).padStart(5, "0")}`;

/** `n` phases, each sending its output to the next one, or (broken) to a phase nobody declares. */
function chain(n: number, broken: boolean): Record<string, any> {
  const m = baseManifest();
  m.phases = Array.from({ length: n }, (_, i) => ({ id: id(i), kind: "retrieve", outputs: { to: `phase:${broken ? `missing_${i}` : id((i + 1) % n)}` } }));
  m.closure = { ...m.closure, from_phase: id(0), to_phase: id(1) };
  return m;
}

function timed<T>(run: () => T): { result: T; ms: number } {
  const start = performance.now();
  const result = run();
  return { result, ms: performance.now() - start };
}

const unknownPhase = (r: ReturnType<typeof validateValue>) => r.diagnostics.filter((d) => d.rule === "pulse/endpoint-unknown-phase");

describe("a manifest with thousands of dangling phase references", () => {
  it("validates in time proportional to its size, with messages of bounded length", () => {
    const n = 4000;
    timed(() => validateValue(chain(200, true))); // warm up, so neither timing below pays for JIT compilation
    const fixed = timed(() => validateValue(chain(n, false)));
    const broken = timed(() => validateValue(chain(n, true)));
    expect(unknownPhase(fixed.result)).toEqual([]);
    const dangling = unknownPhase(broken.result);
    expect(dangling).toHaveLength(n);
    // Quadratic work (a suggestion searched against every phase, every phase listed in every
    // message) made this hundreds of times slower than the clean manifest; now it is a few times.
    expect(broken.ms).toBeLessThan(30 * fixed.ms + 1);
    for (const d of dangling) expect(d.message.length).toBeLessThan(300);
    expect(dangling[0]!.message).toContain(`(phases: ${Array.from({ length: 10 }, (_, i) => id(i)).join(", ")} … and ${n - 10} more)`);
  });

  it("lists at most ten phases in a cross-manifest message too", () => {
    const target = chain(500, false);
    target.loop_id = "b.big";
    const from = baseManifest();
    from.connections = [{ id: "c", emit_phase: "learn", token: "OutcomeSignal", to_loop: "b.big", to_phase: "phase_0001" }];
    const sources = [from, target].map((m, i) => parseSourceText(`m${i}.json`, JSON.stringify(m), "json"));
    const [d] = validateSources(sources)[0]!.diagnostics.filter((x) => x.rule === "pulse/connection-unresolved");
    expect(d!.message).toMatch(/\(phases: phase_00000, .*, phase_00009 … and 490 more\)$/);
    // A large target loop still gets the typo caught.
    expect(d!.suggestion).toBe('did you mean "phase_00001"?');
  });

  it("still lists every phase, and suggests the nearest, for a manifest of normal size", () => {
    const m = baseManifest();
    m.closure.to_phase = "fetc";
    const [d] = validateValue(m).diagnostics.filter((x) => x.rule === "pulse/closure-unknown-phase");
    expect(d!.message).toContain("(phases: fetch, decide, apply, learn)");
    expect(d!.suggestion).toBe('did you mean "fetch"?');

    // Ten phases are all listed; the eleventh is where the list is cut.
    const ten = chain(10, false);
    ten.closure.to_phase = "nowhere";
    expect(validateValue(ten).diagnostics.find((x) => x.rule === "pulse/closure-unknown-phase")!.message).toContain(`${id(8)}, ${id(9)})`);
    const eleven = chain(11, false);
    eleven.closure.to_phase = "nowhere";
    expect(validateValue(eleven).diagnostics.find((x) => x.rule === "pulse/closure-unknown-phase")!.message).toContain(`${id(9)} … and 1 more)`);
  });
});
