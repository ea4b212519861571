import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { parseJsonc } from "../../src/source/jsonc.js";
import { intern } from "../../src/source/intern.js";
import { spanOf, toPointer, walk } from "../../src/source/source-node.js";

const text = '{ "a/b": { "~x": 1 }, "list": [10, 20, 30], "phases": [{ "id": "p" }] }';
const root = parseJsonc(text).root!;
const spelt = (pointer: string, key = false): string => {
  const s = spanOf(root, pointer, key);
  return text.slice(s.start, s.end);
};

describe("walking a JSON pointer through the source tree", () => {
  it("resolves array indices, escaped keys and keys", () => {
    expect(spelt("/list/2")).toBe("30");
    expect(spelt("/list/0")).toBe("10");
    expect(spelt("/a~1b/~0x")).toBe("1");
    expect(spelt("/phases/0/id", true)).toBe('"id"');
    expect(walk(root, "").resolved).toBe(true);
  });

  it("refuses index spellings RFC 6901 does not allow, landing on the deepest node that exists", () => {
    for (const bad of ["/list/01", "/list/-", "/list/1x", "/list/", "/list/3", "/list/99999999999"]) {
      const { node, resolved } = walk(root, bad);
      expect(resolved, bad).toBe(false);
      expect(node.kind, bad).toBe("array");
    }
    // The near miss: a plain index is found.
    expect(walk(root, "/list/1").resolved).toBe(true);
  });

  it("finds every node of any document by the pointer of its path", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), (value) => {
        const json = JSON.stringify(value);
        const tree = parseJsonc(json).root!;
        const visit = (v: unknown, path: (string | number)[]): void => {
          const found = walk(tree, toPointer(path));
          expect(found.resolved).toBe(true);
          expect(JSON.parse(json.slice(found.node.start, found.node.end))).toStrictEqual(v);
          if (Array.isArray(v)) v.forEach((x, i) => visit(x, [...path, i]));
          else if (v !== null && typeof v === "object") for (const [k, x] of Object.entries(v)) visit(x, [...path, k]);
        };
        visit(JSON.parse(json), []);
      }),
      { numRuns: 200 },
    );
  });
});

describe("intern", () => {
  it("returns an equal string, including names Object.prototype has", () => {
    for (const s of ["", "phase:act", "__proto__", "constructor", "§ ünïcode", "x".repeat(300)]) expect(intern(s)).toBe(s);
  });

  it("gives parsed values from a file with non-Latin-1 text the same content", () => {
    const parsed = parseJsonc('{ "note": "§4 — “quoted”", "id": "retrieve_ctx" }');
    expect(parsed.value).toEqual({ note: "§4 — “quoted”", id: "retrieve_ctx" });
  });
});
