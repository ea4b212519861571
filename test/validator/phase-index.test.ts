import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { PhaseIndex } from "../../src/validator/phase-index.js";

describe("PhaseIndex", () => {
  it("answers like a Map of first declarations, for short and long phase lists", () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...Array.from({ length: 40 }, (_, i) => `p${i}`)), { maxLength: 60 }), fc.string(), (ids, probe) => {
        const index = new PhaseIndex();
        const model = new Map<string, number>();
        ids.forEach((id, i) => {
          if (!model.has(id)) model.set(id, i);
          expect(index.declare(id, i)).toBe(model.get(id));
        });
        expect(index.size).toBe(model.size);
        expect([...index.keys()]).toEqual([...model.keys()]);
        for (const id of [...model.keys(), probe, "p99"]) {
          expect(index.get(id)).toBe(model.get(id));
          expect(index.has(id)).toBe(model.has(id));
        }
      }),
      { numRuns: 300 },
    );
  });

  it("finds an id spelt by a string built at run time, not only the interned one", () => {
    const index = new PhaseIndex();
    index.declare("retrieve_context", 0);
    const built = ["retrieve", "context"].join("_");
    expect(index.get(built)).toBe(0);
    expect(index.has("retrieve_contex")).toBe(false);
  });
});
