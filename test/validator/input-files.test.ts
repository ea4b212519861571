/**
 * Whole-file problems through the validator: what a user sees for a file that is not a text
 * manifest at all, placed at 1:1 (where editors and SARIF viewers can show it), next to the
 * near misses that are ordinary manifests.
 */
import { describe, expect, it } from "vitest";
import { parseSourceBytes } from "../../src/source/load.js";
import { validateSources } from "../../src/validator/validate.js";
import { baseManifest } from "../helpers/manifests.js";

const utf8 = (s: string) => new TextEncoder().encode(s);

async function diagnostics(file: string, bytes: Uint8Array) {
  const [result] = validateSources([await parseSourceBytes(file, bytes)]);
  return result!.diagnostics.map((d) => ({ rule: d.rule, at: `${d.line}:${d.column}` }));
}

describe("files that are not text manifests", () => {
  const json = JSON.stringify({ ...baseManifest(), description: "x" }, null, 2);

  it("refuses a file with NUL bytes as binary, at 1:1", async () => {
    const bytes = utf8(json);
    bytes[json.indexOf('"x"') + 1] = 0;
    expect(await diagnostics("m.json", bytes)).toEqual([{ rule: "input/binary", at: "1:1" }]);
  });

  it("accepts a NUL written as an escape, which is text", async () => {
    expect(await diagnostics("m.json", utf8(json.replace('"x"', '"a\\u0000b"')))).toEqual([]);
    // JSON is YAML, where "\0" is the escape for NUL.
    expect(await diagnostics("m.yaml", utf8(json.replace('"x"', '"a\\0b"')))).toEqual([]);
  });

  it("refuses bytes that are not UTF-8 at 1:1, and accepts UTF-8 with a BOM and non-ASCII text", async () => {
    const [before, after] = json.replace('"x"', '"caf@"').split("@") as [string, string];
    const latin1 = Uint8Array.from([...utf8(before), 0xe9, ...utf8(after)]);
    expect(await diagnostics("m.json", latin1)).toEqual([{ rule: "input/encoding", at: "1:1" }]);
    expect(await diagnostics("m.json", utf8(`\uFEFF${json.replace('"x"', '"café ✓"')}`))).toEqual([]);
  });
});
