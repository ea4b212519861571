/** The manifest schema, compiled at build time (scripts/generate-validators.mjs). */
import type { ErrorObject } from "ajv";
import { isValidManifest } from "./generated/manifest-check.generated.js";
import { validateManifest } from "./generated/manifest-validator.generated.js";

type CompiledValidator = ((data: unknown) => boolean) & { errors?: ErrorObject[] | null };

const failFast = isValidManifest as unknown as CompiledValidator;
const detailed = validateManifest as unknown as CompiledValidator;

export function checkSchema(document: unknown): ErrorObject[] {
  if (failFast(document)) return [];
  return detailed(document) ? [] : [...(detailed.errors ?? [])];
}
