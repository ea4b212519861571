import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseSignatureRecipe } from "../../src/grammar/signature-recipe.js";
import { anyText, stringFrom } from "./arbitraries.js";

describe("parseSignatureRecipe accepts", () => {
  it("the spec's §4 recipe, with the span of each field", () => {
    expect(parseSignatureRecipe("hash(query, workspace_id, k)")).toEqual({
      ok: true,
      value: {
        fn: "hash",
        fields: [
          { path: ["query"], offset: 5, length: 5 },
          { path: ["workspace_id"], offset: 12, length: 12 },
          { path: ["k"], offset: 26, length: 1 },
        ],
      },
    });
  });

  it("dotted paths, blake3, and free spacing", () => {
    const result = parseSignatureRecipe("  blake3 ( request.query ,k )  ");
    expect(result).toEqual({
      ok: true,
      value: {
        fn: "blake3",
        fields: [
          { path: ["request", "query"], offset: 11, length: 13 },
          { path: ["k"], offset: 26, length: 1 },
        ],
      },
    });
  });

  it("the spelled-out form of published manifests: a digest, a serialisation, braces", () => {
    expect(parseSignatureRecipe("sha256(canonical_json({query, workspace_id}))")).toEqual({
      ok: true,
      value: {
        fn: "sha256",
        encoding: "canonical_json",
        fields: [
          { path: ["query"], offset: 23, length: 5 },
          { path: ["workspace_id"], offset: 30, length: 12 },
        ],
      },
    });
    const fields = (t: string) => {
      const r = parseSignatureRecipe(t);
      return r.ok ? [r.value.fn, r.value.encoding, r.value.fields.map((f) => f.path.join("."))] : r.error.message;
    };
    expect(fields("sha256( canonical_json ( a.b , c ) )")).toEqual(["sha256", "canonical_json", ["a.b", "c"]]);
    expect(fields("blake3({a})")).toEqual(["blake3", undefined, ["a"]]);
    // A field that happens to be called canonical_json is a field.
    expect(fields("hash(canonical_json, k)")).toEqual(["hash", undefined, ["canonical_json", "k"]]);
  });

  it("a field next to a longer path through it (they are different inputs)", () => {
    const result = parseSignatureRecipe("hash(request, request.query)");
    expect(result.ok && result.value.fields.map((f) => f.path.join("."))).toEqual(["request", "request.query"]);
  });
});

describe("parseSignatureRecipe rejects", () => {
  it.each([
    ["", "empty signature recipe", 0, 0],
    ["md5(query)", `unknown signature function "md5" (use hash or blake3; sha256,`, 0, 3],
    ["sha256(canonical_json({query})", `unclosed "("`, 6, 1],
    ["sha256(canonical_json({query)))", `expected "," or "}" after "query", found ")"`, 28, 1],
    ["sha256(canonical_json({}))", "name at least one input field", 22, 2],
    ["sha256({query}) x", `unexpected "x" after ")"`, 16, 1],
    ["(query)", "a signature recipe is a function of input fields", 0, 1],
    ["hash", `expected "(" after "hash"`, 4, 0],
    ["hash query", `expected "(" after "hash"`, 5, 1],
    ["hash()", "name at least one input field", 4, 2],
    ["hash( )", "name at least one input field", 4, 3],
    ["hash(query, k, query)", `"query" is listed twice`, 15, 5],
    ["hash(a.b, a.b)", `"a.b" is listed twice`, 10, 3],
    ["hash(query,)", `expected a field name after ","`, 11, 1],
    ["hash(,query)", `expected a field name after "("`, 5, 1],
    ["hash(1st)", `expected a field name after "("`, 5, 1],
    ["hash(query.)", `expected a field name after "."`, 10, 1],
    ["hash(query", `unclosed "("`, 4, 1],
    ["hash(query k)", `expected "," or ")" after "query"`, 11, 1],
    ["hash(query) extra", `unexpected "extra" after ")"`, 12, 5],
  ])("%j", (text, message, offset, length) => {
    const result = parseSignatureRecipe(text);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error.message).toContain(message);
    expect(result.error.offset).toBe(offset);
    expect(result.error.length).toBe(length);
  });

  it("never throws; accepted fields' spans hold exactly the dotted path", () => {
    const alphabet = ["hash", "blake3", "sha256", "canonical_json", "(", ")", "{", "}", ",", ".", " ", "a", "b_1", "9"];
    fc.assert(
      fc.property(fc.oneof(anyText, stringFrom(alphabet, 16)), (text) => {
        const result = parseSignatureRecipe(text);
        if (!result.ok) {
          expect(result.error.offset + result.error.length).toBeLessThanOrEqual(text.length);
          return;
        }
        for (const field of result.value.fields) {
          expect(text.slice(field.offset, field.offset + field.length)).toBe(field.path.join("."));
        }
      }),
      { numRuns: 2000 },
    );
  });
});
