import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormatsMod from "ajv-formats";
import type { FormatsPlugin } from "ajv-formats";
import { MAX_SARIF_RESULTS, fileUri } from "../../src/format/sarif.js";
import { formatReport } from "../../src/format/report.js";
import type { Diagnostic, FileResult } from "../../src/validator/diagnostic.js";
import { anchor } from "../../src/validator/rules-doc.js";
import { OPTIONS, results } from "./fixtures.js";
import { readDoc } from "./markdown-blocks.js";

// ajv-formats is CommonJS; under NodeNext its default import is the module object.
const addFormats: FormatsPlugin = (addFormatsMod as unknown as { default?: FormatsPlugin }).default ?? (addFormatsMod as unknown as FormatsPlugin);

const sarif = (r: readonly FileResult[], quiet = false) => JSON.parse(formatReport("sarif", r, { ...OPTIONS, quiet }).stdout);

const diag = (over: Partial<Diagnostic>): Diagnostic => ({ severity: "error", rule: "schema/type", message: "m", pointer: "", line: 1, column: 1, endLine: 1, endColumn: 2, ...over });

/**
 * The part of the SARIF 2.1.0 schema this reporter writes, with the same property names and
 * constraints (additionalProperties: false, as in the official schema), plus what GitHub code
 * scanning additionally requires: rule descriptions and help text, region.startLine.
 */
const text = { type: "object", required: ["text"], additionalProperties: false, properties: { text: { type: "string", minLength: 1 } } };
const messageText = { type: "object", required: ["text"], additionalProperties: false, properties: { text: { type: "string" } } };
const positive = { type: "integer", minimum: 1 };
const artifactLocation = {
  type: "object",
  required: ["uri"],
  additionalProperties: false,
  properties: { uri: { type: "string", format: "uri-reference" }, uriBaseId: { const: "%SRCROOT%" }, index: { type: "integer", minimum: 0 } },
};
const region = {
  type: "object",
  required: ["startLine"],
  additionalProperties: false,
  properties: { startLine: positive, startColumn: positive, endLine: positive, endColumn: positive },
};
const physicalLocation = { type: "object", required: ["artifactLocation"], additionalProperties: false, properties: { artifactLocation, region } };
const level = { enum: ["error", "warning", "note"] };
const SARIF_SUBSET = {
  type: "object",
  required: ["$schema", "version", "runs"],
  additionalProperties: false,
  properties: {
    $schema: { const: "https://json.schemastore.org/sarif-2.1.0.json" },
    version: { const: "2.1.0" },
    runs: {
      type: "array",
      minItems: 1,
      maxItems: 1,
      items: {
        type: "object",
        required: ["tool", "results"],
        additionalProperties: false,
        properties: {
          tool: {
            type: "object",
            required: ["driver"],
            additionalProperties: false,
            properties: {
              driver: {
                type: "object",
                required: ["name", "version", "informationUri", "rules"],
                additionalProperties: false,
                properties: {
                  name: { const: "pulse-validate" },
                  version: { type: "string" },
                  informationUri: { type: "string", format: "uri" },
                  rules: {
                    type: "array",
                    items: {
                      type: "object",
                      required: ["id", "shortDescription", "fullDescription", "defaultConfiguration", "helpUri", "help"],
                      additionalProperties: false,
                      properties: {
                        id: { type: "string" },
                        shortDescription: text,
                        fullDescription: text,
                        defaultConfiguration: { type: "object", required: ["level"], additionalProperties: false, properties: { level } },
                        helpUri: { type: "string", format: "uri" },
                        help: text,
                      },
                    },
                  },
                },
              },
            },
          },
          columnKind: { const: "utf16CodeUnits" },
          invocations: {
            type: "array",
            items: {
              type: "object",
              required: ["executionSuccessful"],
              additionalProperties: false,
              properties: {
                executionSuccessful: { type: "boolean" },
                toolExecutionNotifications: { type: "array", items: { type: "object", required: ["message"], additionalProperties: false, properties: { level, message: messageText } } },
              },
            },
          },
          artifacts: { type: "array", items: { type: "object", required: ["location"], additionalProperties: false, properties: { location: artifactLocation } } },
          results: {
            type: "array",
            items: {
              type: "object",
              required: ["ruleId", "ruleIndex", "level", "message", "locations"],
              additionalProperties: false,
              properties: {
                ruleId: { type: "string" },
                ruleIndex: { type: "integer", minimum: 0 },
                level,
                message: messageText,
                locations: {
                  type: "array",
                  minItems: 1,
                  maxItems: 1,
                  items: { type: "object", required: ["physicalLocation"], additionalProperties: false, properties: { physicalLocation: { ...physicalLocation, required: ["artifactLocation", "region"] } } },
                },
                relatedLocations: {
                  type: "array",
                  items: {
                    type: "object",
                    required: ["id", "physicalLocation", "message"],
                    additionalProperties: false,
                    properties: { id: { type: "integer", minimum: 0 }, message: messageText, physicalLocation },
                  },
                },
                properties: { type: "object", required: ["pointer"], properties: { pointer: { type: "string" } } },
              },
            },
          },
        },
      },
    },
  },
};

const ajv = new Ajv2020({ strict: true, allErrors: true });
addFormats(ajv);
const validate = ajv.compile(SARIF_SUBSET);

function expectSarif(log: unknown): void {
  validate(log);
  expect(validate.errors ?? []).toEqual([]);
}

interface Run {
  tool: { driver: { rules: { id: string; helpUri: string; defaultConfiguration: { level: string } }[] } };
  artifacts: { location: { uri: string; uriBaseId?: string } }[];
  results: {
    ruleId: string;
    ruleIndex: number;
    level: string;
    message: { text: string };
    locations: { physicalLocation: { artifactLocation: { uri: string; uriBaseId?: string; index: number }; region: Record<string, number> } }[];
    relatedLocations?: unknown[];
    properties: { pointer: string };
  }[];
}

describe("sarif", () => {
  it("has the structure GitHub code scanning accepts", () => {
    expectSarif(sarif(results()));
    expectSarif(sarif([]));
    expectSarif(sarif(results(), true));
    // The check has teeth: a result without a region, or a zero column, is refused.
    const broken = sarif(results());
    delete broken.runs[0].results[0].locations[0].physicalLocation.region;
    expect(validate(broken)).toBe(false);
    const zero = sarif(results());
    zero.runs[0].results[0].locations[0].physicalLocation.region.startColumn = 0;
    expect(validate(zero)).toBe(false);
  });

  it("keeps a run within GitHub's 25,000 results, dropping the least severe and saying so", () => {
    const many = (errors: number, warnings: number): FileResult[] => [
      { file: "a.yaml", valid: false, diagnostics: [...Array.from({ length: warnings }, (_, i) => diag({ severity: "warning", line: i + 1 })), ...Array.from({ length: errors }, (_, i) => diag({ line: warnings + i + 1 }))] },
    ];
    const over = sarif(many(100, MAX_SARIF_RESULTS));
    expect(validate(over), JSON.stringify(validate.errors)).toBe(true);
    const run = over.runs[0];
    expect(run.results).toHaveLength(MAX_SARIF_RESULTS);
    // Every error is kept; the warnings that made room for them are the ones dropped, order kept.
    expect(run.results.filter((r: { level: string }) => r.level === "error")).toHaveLength(100);
    const lines = run.results.map((r: { locations: { physicalLocation: { region: { startLine: number } } }[] }) => r.locations[0]!.physicalLocation.region.startLine);
    expect(lines).toEqual([...lines].sort((a: number, b: number) => a - b));
    expect(run.invocations[0].toolExecutionNotifications[0].message.text).toBe(`100 of ${MAX_SARIF_RESULTS + 100} results omitted (the least severe): GitHub code scanning rejects a run with more than 25000. The json format lists them all.`);
    // The near miss: exactly at the limit, nothing is dropped and nothing is said.
    const at = sarif(many(100, MAX_SARIF_RESULTS - 100)).runs[0];
    expect(at.results).toHaveLength(MAX_SARIF_RESULTS);
    expect(at.invocations).toBeUndefined();
  });

  it("describes the whole rule catalogue, each rule linked to its section of docs/rules.md", () => {
    const run: Run = sarif([]).runs[0];
    const rules = run.tool.driver.rules;
    expect(rules.map((r) => r.id)).toEqual(OPTIONS.rules.map((r) => r.id));
    const anchors = new Set(
      readDoc("rules.md")
        .split("\n")
        .filter((l) => l.startsWith("## "))
        .map((l) => anchor(l.slice(3))),
    );
    for (const r of rules) {
      const [base, hash] = r.helpUri.split("#");
      expect(base).toBe("https://github.com/opensentience/pulse/blob/main/docs/rules.md");
      expect(anchors.has(hash!), `${r.id} -> #${hash}`).toBe(true);
    }
    const levels = Object.fromEntries(rules.map((r) => [r.id, r.defaultConfiguration.level]));
    expect(levels).toMatchObject({ "schema/enum": "error", "pulse/missing-act": "warning", "pulse/connection-external": "note" });
    expect(sarif([]).runs[0].tool.driver).toMatchObject({ name: "pulse-validate", version: "0.1.0", informationUri: "https://github.com/opensentience/pulse" });
  });

  it("gives each result its rule, level, message, region and artifact", () => {
    const run: Run = sarif(results()).runs[0];
    const rules = run.tool.driver.rules;
    for (const r of run.results) {
      expect(rules[r.ruleIndex]!.id).toBe(r.ruleId);
      const loc = r.locations[0]!.physicalLocation.artifactLocation;
      expect(run.artifacts[loc.index]!.location).toEqual({ uri: loc.uri, uriBaseId: loc.uriBaseId });
    }
    expect(run.results.map((r) => `${r.level} ${r.ruleId}`)).toEqual([
      "error input/empty",
      "warning pulse/missing-retrieve",
      "error schema/enum",
      "error schema/unknown-property",
      "error schema/pattern",
      "error pulse/closure-unknown-phase",
      "note pulse/connection-external",
      "error json/syntax",
      "error input/encoding",
    ]);
    const enumResult = run.results[2]!;
    expect(enumResult.message.text).toBe('phases[0].kind must be one of retrieve, route, act, learn, consolidate, custom; found the string "retreive" (did you mean "retrieve"?)');
    expect(enumResult.locations[0]!.physicalLocation).toEqual({
      artifactLocation: { uri: "loops/dir%20with%20space/bad%2Cloop.yaml", uriBaseId: "%SRCROOT%", index: 1 },
      region: { startLine: 5, startColumn: 11, endLine: 5, endColumn: 21 },
    });
    expect(enumResult.properties).toEqual({ pointer: "/phases/0/kind" });
    // A multi-line span keeps its end; a file-level diagnostic sits on line 1.
    expect(run.results[1]!.locations[0]!.physicalLocation.region).toEqual({ startLine: 4, startColumn: 3, endLine: 8, endColumn: 14 });
    expect(run.results[8]!.locations[0]!.physicalLocation.region).toEqual({ startLine: 1 });
    expect(run.results[6]!.relatedLocations).toEqual([{ id: 1, message: { text: "loop ops.audit" }, physicalLocation: { artifactLocation: { uri: "loops/ops.yaml", uriBaseId: "%SRCROOT%" } } }]);
    expect(run.artifacts.map((a) => a.location.uri)).toEqual(["empty.yaml", "loops/dir%20with%20space/bad%2Cloop.yaml", "manifests/ok.yaml", "odd%3Aname%25.json", "unreadable.yaml"]);
  });

  it("describes a rule missing from the catalogue rather than leaving ruleIndex dangling", () => {
    const log = sarif([{ file: "a.yaml", valid: false, diagnostics: [diag({ rule: "plugin/custom-check", severity: "warning" })] }]);
    expectSarif(log);
    const run: Run = log.runs[0];
    const r = run.results[0]!;
    expect(r.ruleIndex).toBe(OPTIONS.rules.length);
    expect(run.tool.driver.rules[r.ruleIndex]).toMatchObject({ id: "plugin/custom-check", defaultConfiguration: { level: "warning" } });
  });

  it("writes file paths as relative, forward-slash, percent-encoded URI references", () => {
    expect(fileUri("loops/a b,c#d?.yaml")).toEqual({ uri: "loops/a%20b%2Cc%23d%3F.yaml", uriBaseId: "%SRCROOT%" });
    expect(fileUri("./loops/été.yaml")).toEqual({ uri: "loops/%C3%A9t%C3%A9.yaml", uriBaseId: "%SRCROOT%" });
    expect(fileUri("loops\\win\\x.yaml")).toEqual({ uri: "loops/win/x.yaml", uriBaseId: "%SRCROOT%" });
    expect(fileUri("c:odd.yaml")).toEqual({ uri: "c%3Aodd.yaml", uriBaseId: "%SRCROOT%" });
    expect(fileUri("../shared/x.yaml")).toEqual({ uri: "../shared/x.yaml", uriBaseId: "%SRCROOT%" });
    expect(fileUri("/abs/a b.yaml")).toEqual({ uri: "file:///abs/a%20b.yaml" });
    expect(fileUri("C:\\work\\a b.yaml")).toEqual({ uri: "file:///C:/work/a%20b.yaml" });
    expect(fileUri("<stdin>")).toEqual({ uri: "%3Cstdin%3E", uriBaseId: "%SRCROOT%" });
    expect(fileUri("bad\uD800.yaml").uri).toBe("bad%EF%BF%BD.yaml");
  });

  it("encodes any relative path so it decodes back, with only RFC 3986 path characters (property)", () => {
    const segment = fc.string({ unit: "grapheme", minLength: 1 }).filter((s) => !s.includes("/") && !s.includes("\\") && s !== "." && s !== "..");
    fc.assert(
      fc.property(fc.array(segment, { minLength: 1, maxLength: 4 }), (segments) => {
        fc.pre(!/^[A-Za-z]:$/.test(segments[0]!) || segments.length === 1);
        const path = segments.join("/");
        const { uri, uriBaseId } = fileUri(path);
        expect(uriBaseId).toBe("%SRCROOT%");
        expect(uri).toMatch(/^(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/]|%[0-9A-F]{2})*$/);
        expect(uri.split("/")[0]).not.toContain(":");
        expect(uri.split("/").map(decodeURIComponent).join("/")).toBe(path.replace(/^(\.\/)+/, ""));
      }),
    );
  });
});
