/** Loads the project's JSON Schemas and compiles them the strict way every test here relies on. */
import { readFileSync, readdirSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { Ajv2020 } from "ajv/dist/2020.js";
import type { ValidateFunction } from "ajv";
import addFormatsMod from "ajv-formats";
import type { FormatsPlugin } from "ajv-formats";

// ajv-formats is CommonJS; under NodeNext its default import is the module object.
const addFormats: FormatsPlugin =
  (addFormatsMod as unknown as { default?: FormatsPlugin }).default ?? (addFormatsMod as unknown as FormatsPlugin);

export type JsonObject = { [key: string]: unknown };

export const PROJECT_ROOT = fileURLToPath(new URL("../../", import.meta.url));
export const SCHEMA_DIR = join(PROJECT_ROOT, "schema");
export const MANIFEST_SCHEMA_FILE = "pulse-loop-manifest.v0.1.json";
export const ENVELOPE_SCHEMA_FILE = "tokens/cloudevents-envelope.v0.1.json";

export function readJson(path: string): unknown {
  return JSON.parse(readFileSync(path, "utf8"));
}

export function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Every `.json` file under `schema/`, as a `/`-separated path relative to it, sorted. */
export function schemaFiles(dir: string = SCHEMA_DIR): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...schemaFiles(full));
    else if (entry.name.endsWith(".json")) found.push(full);
  }
  return dir === SCHEMA_DIR ? found.map((f) => relative(SCHEMA_DIR, f).split(sep).join("/")).sort() : found;
}

export function loadSchema(file: string): JsonObject {
  const schema = readJson(join(SCHEMA_DIR, file));
  if (!isObject(schema)) throw new Error(`${file} is not a JSON object`);
  return schema;
}

export function tokenSchemaFile(token: string): string {
  return `tokens/${token}.v0.1.json`;
}

/**
 * Ajv in strict mode, with everything it would merely log collected, so a test can demand a
 * schema that compiles without a single complaint.
 */
export function strictAjv(): { ajv: Ajv2020; warnings: string[] } {
  const warnings: string[] = [];
  const collect = (...args: unknown[]): void => {
    warnings.push(args.map(String).join(" "));
  };
  const ajv = new Ajv2020({ strict: true, allErrors: true, logger: { log: collect, warn: collect, error: collect } });
  addFormats(ajv);
  return { ajv, warnings };
}

export function compile(file: string): ValidateFunction {
  return strictAjv().ajv.compile(loadSchema(file));
}
