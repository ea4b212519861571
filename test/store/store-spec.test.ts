/**
 * `--store` spellings: a plain file path is a SQLite file for every command (as `pulse session`
 * has always taken it); a scheme pulse does not know is refused, never turned into a new file.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseStoreSpec } from "../../adapters/store.js";
import { spellStoreSpec, StoreError } from "../../src/store/contracts.js";

describe("--store specs", () => {
  it("a plain path, relative or absolute, is the SQLite file at that path", () => {
    expect(parseStoreSpec(".pulse/pulse.db")).toEqual({ kind: "sqlite", path: ".pulse/pulse.db" });
    expect(parseStoreSpec("/tmp/a b/x.db")).toEqual({ kind: "sqlite", path: "/tmp/a b/x.db" });
    expect(parseStoreSpec("x")).toEqual({ kind: "sqlite", path: "x" });
    const path = fc.stringMatching(/^[./A-Za-z0-9_ -]{1,40}$/).filter((p) => p.trim() !== "" && p !== "memory");
    fc.assert(fc.property(path, (p) => {
      expect(spellStoreSpec(p)).toBe(`sqlite:${p}`);
      expect(parseStoreSpec(p)).toEqual({ kind: "sqlite", path: p });
      expect(spellStoreSpec(spellStoreSpec(p))).toBe(spellStoreSpec(p));
    }));
  });

  it("the spelled schemes are left as they are", () => {
    for (const spec of ["sqlite:x.db", "memory:", "memory", "postgres://127.0.0.1/test?schema=a", "postgresql://h/db"]) expect(spellStoreSpec(spec)).toBe(spec);
    expect(parseStoreSpec("memory")).toEqual({ kind: "memory" });
    expect(parseStoreSpec("memory:")).toEqual({ kind: "memory" });
  });

  it("a typo of a scheme, an unknown scheme and an empty spec are refused, naming what it takes", () => {
    for (const spec of ["sqllite:x.db", "mysql://h/db", "redis:x", "", "  "]) {
      expect(() => parseStoreSpec(spec), spec).toThrow(StoreError);
      expect(() => parseStoreSpec(spec), spec).toThrow(/--store takes sqlite:PATH, a file path or memory:/);
    }
  });
});
