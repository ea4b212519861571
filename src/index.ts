/**
 * pulse: the PULSE (OS-010 v0.1) reference runtime, validator and conformance toolkit.
 * The runtime (createRuntime), the validator (validateSources, validateValue), the substrate
 * contracts and registry, and the manifest and token types.
 */
export * from "./runtime/index.js";
export { createRuntime, withEmbeddedDefaults, openStore, DEFAULT_STORE } from "./embedded.js";
export { StoreError, type Store, type UnitOfWork } from "./store/contracts.js";
export { validateSources, validateValue, type ValidateOptions } from "./validator/validate.js";
export type { Diagnostic, FileResult, Severity } from "./validator/diagnostic.js";
export { readSource, type ManifestSource } from "./source/load.js";
export { parseSourceText } from "./source/parse-text.js";
export * from "./substrates/contracts.js";
export { SubstrateRegistry, type SubstrateFactory } from "./substrates/registry.js";
export type * from "./manifest/types.js";
export type * from "./tokens/types.js";
export { buildGraph, renderDiagram, toMermaid, toDot, toJson } from "./diagram/index.js";
export type { DiagramGraph } from "./diagram/index.js";
