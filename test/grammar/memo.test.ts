import { describe, expect, it } from "vitest";
import { memoize } from "../../src/grammar/memo.js";
import { parseEndpointsCached } from "../../src/grammar/cached.js";

describe("memoized grammar results", () => {
  it("are shared between callers, their objects frozen against accidental mutation", () => {
    const a = parseEndpointsCached("external|phase:act");
    const b = parseEndpointsCached("external|phase:act");
    expect(a).toBe(b);
    if (!a.ok) throw new Error("should parse");
    const ref = a.value[1]!;
    expect(Object.isFrozen(ref)).toBe(true);
    expect(() => Object.assign(ref, { phase: "other" })).toThrow(TypeError);
  });

  it("stay bounded: the oldest entry is evicted first", () => {
    let calls = 0;
    const parse = memoize((t: string) => ({ t, n: ++calls }), 2);
    parse("a");
    parse("b");
    parse("a");
    expect(calls).toBe(2);
    parse("c"); // evicts "a"
    parse("b");
    expect(calls).toBe(3);
    parse("a");
    expect(calls).toBe(4);
  });

  it("do not keep very long inputs", () => {
    let calls = 0;
    const parse = memoize((t: string) => ({ t, n: ++calls }));
    const long = "x".repeat(300);
    parse(long);
    parse(long);
    expect(calls).toBe(2);
  });
});
