/**
 * The library's parseSourceText parses YAML with nothing called first. This file imports only the
 * package entry, so no other module has loaded the YAML parser in this (forked) test process.
 */
import { describe, expect, it } from "vitest";
import { parseSourceText, validateSources } from "../../src/index.js";

describe("parseSourceText from the package entry", () => {
  it("parses YAML, JSON and extension-less text without an init call", () => {
    const yaml = parseSourceText("x.yaml", "loop_id: a.b\nphases: [1, 2]\n");
    expect(yaml).toMatchObject({ format: "yaml", problems: [], value: { loop_id: "a.b", phases: [1, 2] } });
    expect(parseSourceText("x.json", '{"a": 1}')).toMatchObject({ format: "json", value: { a: 1 } });
    expect(parseSourceText("stdin", "a: [b]\n")).toMatchObject({ format: "yaml", value: { a: ["b"] } });
    expect(validateSources([yaml])[0]!.valid).toBe(false);
  });

  it("reports a YAML syntax error with a position instead of throwing", () => {
    const broken = parseSourceText("x.yaml", "a: [1, 2\n");
    expect(broken.value).toBeUndefined();
    expect(broken.problems[0]).toMatchObject({ rule: "yaml/syntax", severity: "error" });
  });
});
