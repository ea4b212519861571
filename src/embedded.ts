/**
 * The composition root: where the runtime and the host, which depend on the substrate contracts
 * only, meet the embedded default adapters. `createRuntime` and `createHost`, as the package
 * exports them (`pulse`, `pulse/host`), bind under whatever the caller registered: an http(s)
 * URI names a service speaking docs/substrates-http.md (never silently replaced by memory), a
 * postgres:// URI the PostgreSQL audit (docs/deploy.md), and any other URI is served by the
 * in-memory adapters.
 */
import { httpSubstrateFactory } from "../adapters/http/client.js";
import { inMemorySubstrateFactory } from "../adapters/memory/index.js";
import { postgresSubstrateFactory } from "../adapters/postgres/substrates.js";
import { Host, type HostOptions } from "./host/host.js";
import { Runtime, type RuntimeOptions } from "./runtime/runtime.js";
import { initSignatures } from "./runtime/signature.js";
import { SubstrateRegistry, type SubstrateFactory } from "./substrates/registry.js";
import type { Store } from "./store/contracts.js";

/**
 * Adds the embedded defaults to the registry (a new one when none is given), under its own
 * bindings. With a store, the default memory and audit slots are the store's: kept in it, and
 * committed with each phase.
 */
export function withEmbeddedDefaults(registry: SubstrateRegistry = new SubstrateRegistry(), store?: Store): SubstrateRegistry {
  for (const scheme of ["http", "https"]) if (!registry.hasScheme(scheme)) registry.scheme(scheme, httpSubstrateFactory());
  for (const scheme of ["postgres", "postgresql"]) if (!registry.hasScheme(scheme)) registry.scheme(scheme, postgresSubstrateFactory());
  if (!registry.hasFallback) registry.fallbackTo(store ? storeSubstrateFactory(store) : inMemorySubstrateFactory());
  return registry;
}

/** A runtime with the embedded default adapters (see RuntimeOptions.registry for your own). */
export async function createRuntime(options: RuntimeOptions = {}): Promise<Runtime> {
  await initSignatures();
  return new Runtime({ ...options, registry: withEmbeddedDefaults(options.registry, options.store) });
}

/** A host (and its runtime) with the embedded default adapters. */
export function createHost(options: HostOptions = {}): Promise<Host> {
  return Host.assemble({ ...options, registry: withEmbeddedDefaults(options.registry, options.store) });
}

/**
 * A registry whose default audit slot is the store's trail (chained, read by `pulse audit`),
 * every other default slot in memory: for loops that keep their own records (the coding loops).
 * Given with the same store as the runtime's `store`, their iterations are journaled there too,
 * each phase's output and audit events in one unit, and a crashed iteration resumes from it.
 */
export function storeAuditRegistry(store: Store): SubstrateRegistry {
  const inMemory = inMemorySubstrateFactory();
  return withEmbeddedDefaults(new SubstrateRegistry().fallbackTo(((slot, uri) => (slot === "audit" ? store.audit : inMemory(slot, uri))) as SubstrateFactory));
}

/** The store's memory graphs (one per memory URI) and audit trail; every other slot in memory. */
function storeSubstrateFactory(store: Store): SubstrateFactory {
  const inMemory = inMemorySubstrateFactory();
  return (slot, uri) => (slot === "memory" ? store.memory(uri) : slot === "audit" ? store.audit : inMemory(slot, uri)) as never;
}

export { openStore, DEFAULT_STORE } from "../adapters/store.js";
