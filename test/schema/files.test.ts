/**
 * Each schema file is what an editor or another validator expects to find: draft 2020-12, an
 * `$id` under https://opensentience.org/schemas/ that matches where the file lives, and a schema
 * that Ajv compiles in strict mode without a single warning (so a mistyped keyword cannot hide).
 */
import { describe, expect, it } from "vitest";
import { MANIFEST_SCHEMA_ID } from "../../src/manifest/types.js";
import { TOKEN_NAMES } from "../../src/tokens/types.js";
import { MANIFEST_SCHEMA_FILE, loadSchema, schemaFiles, strictAjv, tokenSchemaFile } from "./schemas.js";

describe("schema files", () => {
  it("ship the manifest schema, one schema per token and the envelope", () => {
    expect(schemaFiles().filter((f) => !f.startsWith("conformance/"))).toEqual(
      [MANIFEST_SCHEMA_FILE, "tokens/cloudevents-envelope.v0.1.json", ...TOKEN_NAMES.map(tokenSchemaFile)].sort(),
    );
    // pulse-conform's public contracts: the report, and the driver protocol's messages.
    expect(schemaFiles()).toContain("conformance/report.v1.json");
  });

  it("publish the manifest schema under the id the spec names", () => {
    expect(loadSchema(MANIFEST_SCHEMA_FILE).$id).toBe(MANIFEST_SCHEMA_ID);
  });

  it.each(schemaFiles())("%s is draft 2020-12 with an $id matching its path", (file) => {
    const schema = loadSchema(file);
    expect(schema.$schema).toBe("https://json-schema.org/draft/2020-12/schema");
    expect(schema.$id).toBe(`https://opensentience.org/schemas/${file}`);
  });

  it.each(schemaFiles())("%s compiles under Ajv strict mode without warnings", (file) => {
    const { ajv, warnings } = strictAjv();
    expect(() => ajv.compile(loadSchema(file))).not.toThrow();
    expect(warnings).toEqual([]);
  });

  it("strict mode does report a mistyped keyword, so the check above is not vacuous", () => {
    const { ajv } = strictAjv();
    expect(() => ajv.compile({ type: "object", properties: { a: { type: "string", minLenght: 1 } } })).toThrow(/minLenght/);
  });
});
