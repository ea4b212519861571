/**
 * Editors show a schema's `description` as hover help. This keeps that help complete: every
 * property at every depth (inside `$defs`, `items`, `if`/`then`, …) and every `$defs` entry of
 * every schema file must describe itself, and a failure names the JSON pointer to fix.
 */
import { describe, expect, it } from "vitest";
import { isObject, loadSchema, schemaFiles, type JsonObject } from "./schemas.js";

const SINGLE_SUBSCHEMA = ["items", "additionalProperties", "contains", "if", "then", "else", "not", "propertyNames", "unevaluatedProperties", "unevaluatedItems"];
const SUBSCHEMA_LISTS = ["allOf", "anyOf", "oneOf", "prefixItems"];
const NAMED_PROPERTIES = ["properties", "patternProperties"];
const NAMED_SUBSCHEMAS = ["$defs", "dependentSchemas"];

const escapePointer = (segment: string): string => segment.replace(/~/g, "~0").replace(/\//g, "~1");

function described(schema: unknown): boolean {
  return isObject(schema) && typeof schema.description === "string" && schema.description.trim() !== "";
}

/** JSON pointers of every property schema (and `$defs` entry) without a description. */
function undescribed(schema: unknown, pointer = ""): string[] {
  if (!isObject(schema)) return [];
  const missing: string[] = [];
  const visitNamed = (keyword: string, mustDescribe: boolean): void => {
    const map = schema[keyword];
    if (!isObject(map)) return;
    for (const [name, child] of Object.entries(map)) {
      const childPointer = `${pointer}/${keyword}/${escapePointer(name)}`;
      if (mustDescribe && !described(child)) missing.push(childPointer);
      missing.push(...undescribed(child, childPointer));
    }
  };
  for (const keyword of NAMED_PROPERTIES) visitNamed(keyword, true);
  visitNamed("$defs", true);
  for (const keyword of NAMED_SUBSCHEMAS.filter((k) => k !== "$defs")) visitNamed(keyword, false);
  for (const keyword of SINGLE_SUBSCHEMA) missing.push(...undescribed(schema[keyword], `${pointer}/${keyword}`));
  for (const keyword of SUBSCHEMA_LISTS) {
    const list = schema[keyword];
    if (Array.isArray(list)) list.forEach((child, i) => missing.push(...undescribed(child, `${pointer}/${keyword}/${i}`)));
  }
  return missing;
}

describe("every schema property has a description", () => {
  it("finds the schema files", () => {
    expect(schemaFiles()).toContain("pulse-loop-manifest.v0.1.json");
    expect(schemaFiles().length).toBeGreaterThanOrEqual(8);
  });

  it.each(schemaFiles())("%s", (file) => {
    const schema = loadSchema(file);
    expect(undescribed(schema), `properties without a description in schema/${file}`).toEqual([]);
    expect(typeof schema.title, `schema/${file} needs a title`).toBe("string");
    expect(described(schema), `schema/${file} needs a top-level description`).toBe(true);
  });
});

describe("the description walker", () => {
  const deep: JsonObject = {
    description: "root",
    properties: {
      ok: { description: "fine", type: "object", properties: { inner: { type: "string" } } },
      "a/b": { type: "string" },
      blank: { description: "  ", type: "string" },
    },
    $defs: {
      shape: { type: "object", properties: { x: { description: "x" } } },
      listed: { description: "d", type: "array", items: { type: "object", properties: { y: { type: "number" } } } },
    },
    allOf: [{ if: { properties: { k: { const: 1 } } }, then: { properties: { k: { description: "k" } } } }],
  };

  it("names the JSON pointer of each undescribed property, at any depth", () => {
    expect(undescribed(deep).sort()).toEqual(
      [
        "/properties/ok/properties/inner",
        "/properties/a~1b",
        "/properties/blank",
        "/$defs/shape",
        "/$defs/listed/items/properties/y",
        "/allOf/0/if/properties/k",
      ].sort(),
    );
  });

  it("is satisfied once every property is described", () => {
    const fixed = {
      description: "root",
      properties: { ok: { description: "fine", type: "object", properties: { inner: { description: "i" } } } },
      $defs: { shape: { description: "s", properties: { x: { description: "x" } } } },
      allOf: [{ then: { properties: { k: { description: "k" } } } }],
    };
    expect(undescribed(fixed)).toEqual([]);
  });
});
