import { describe, expect, it } from "vitest";
import { closest, distance, someOf } from "../../src/grammar/suggest.js";

const ids = (n: number, prefix = "phase_") => Array.from({ length: n }, (_, i) => `${prefix}${String(i).padStart(5, "0")}`);

describe("did you mean", () => {
  it("suggests a close typo, a clear prefix, a rule id without its namespace; nothing for a stranger", () => {
    expect(closest("retreive", ["retrieve", "route", "act"])).toBe("retrieve");
    expect(closest("timeout", ["timeout_ms", "rate"])).toBe("timeout_ms");
    expect(closest("closure-not-grounded", ["pulse/closure-not-grounded"])).toBe("pulse/closure-not-grounded");
    expect(closest("zzz", ["retrieve", "route", "act"])).toBeUndefined();
    // A candidate far longer than the input is never a typo of it, however it starts.
    expect(closest("fe", ["fetch_everything"])).toBeUndefined();
  });

  it("measures edit distance exactly within the bound it is given", () => {
    expect(distance("retreive", "retrieve")).toBe(1);
    expect(distance("kitten", "sitting")).toBe(3);
    expect(distance("kitten", "sitting", 3)).toBe(3);
    expect(distance("kitten", "sitting", 2)).toBeGreaterThan(2);
    expect(distance("abcdefgh", "hgfedcba", 1)).toBeGreaterThan(1);
  });

  it("stops searching a huge candidate list after a budget of lookups, and only that list", () => {
    const big = ids(20_000);
    const lookups = Array.from({ length: 200 }, (_, i) => closest(`phase_${String(i).padStart(5, "0")}x`, big));
    expect(lookups[0]).toBe("phase_00000");
    expect(lookups.at(-1)).toBeUndefined();
    // Another loop's list has its own budget ...
    expect(closest("phase_00007x", ids(20_000))).toBe("phase_00007");
    // ... and a small list (tokens, keys, a normal loop's phases) is never cut off.
    const small = ["fetch", "decide", "apply", "learn"];
    for (let i = 0; i < 20_000; i++) closest("nothing_like_these", small);
    expect(closest("fetc", small)).toBe("fetch");
  });

  it("lists everything when short, else the first ten and a count", () => {
    expect(someOf(["a", "b"])).toBe("a, b");
    expect(someOf(ids(10))).toBe(ids(10).join(", "));
    expect(someOf(ids(12))).toBe(`${ids(10).join(", ")} … and 2 more`);
  });
});
