/** The manifest schema, compiled at build time (scripts/generate-validators.mjs). */
import type { ErrorObject } from "ajv";
import { isValidManifest } from "./generated/manifest-check.generated.js";
import { validateManifest } from "./generated/manifest-validator.generated.js";

type CompiledValidator = ((data: unknown) => boolean) & { errors?: ErrorObject[] | null };

const failFast = isValidManifest as unknown as CompiledValidator;
const detailed = validateManifest as unknown as CompiledValidator;

/** Shared: a valid document (the common case) allocates nothing. */
const NO_ERRORS: readonly ErrorObject[] = Object.freeze([]);

export function checkSchema(document: unknown): readonly ErrorObject[] {
  if (failFast(document)) return NO_ERRORS;
  return detailed(document) ? NO_ERRORS : [...(detailed.errors ?? [])];
}
