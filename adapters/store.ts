/**
 * `--store` specs to Store adapters: `sqlite:PATH` or a plain file path (the durable default, `.pulse/pulse.db` in the
 * working directory), `postgres://…?schema=…` (a fleet's shared store, adapters/postgres/store.ts),
 * `memory:` (nothing kept after the process). Bound where the program is
 * assembled (src/embedded.ts, the CLI); the runtime sees the Store contract only.
 */
import { resolve } from "node:path";
import { initSignatures } from "../src/runtime/signature.js";
import { DEFAULT_STORE, spellStoreSpec, StoreError, type Store } from "../src/store/contracts.js";
import { MemoryStore } from "./memory/store.js";

export { DEFAULT_STORE };

export type StoreSpec = { kind: "memory" } | { kind: "sqlite"; path: string } | { kind: "postgres"; url: string };

export function parseStoreSpec(given: string): StoreSpec {
  const spec = spellStoreSpec(given);
  if (spec === "memory:" || spec === "memory") return { kind: "memory" };
  const m = /^sqlite:(.+)$/.exec(spec);
  if (m) return { kind: "sqlite", path: m[1] as string };
  if (/^postgres(ql)?:\/\//.test(spec)) return { kind: "postgres", url: spec };
  throw new StoreError("STORE_SPEC", `--store takes sqlite:PATH, a file path or memory: (postgres://… for a fleet), not ${JSON.stringify(spec)} (default ${DEFAULT_STORE})`);
}

/** Opens (creating and migrating as needed) the store a spec names, relative to `cwd`. */
export async function openStore(spec: string, options: { cwd?: string; readonly?: boolean; note?: (message: string) => void } = {}): Promise<Store> {
  const parsed = parseStoreSpec(spec);
  // The audit chain hashes with BLAKE3, loaded once.
  await initSignatures();
  if (parsed.kind === "memory") return new MemoryStore();
  if (parsed.kind === "postgres") {
    const { PostgresStore } = await import("./postgres/store.js");
    // Connected as an owner, the host works as the runtime's role (SET ROLE) and says so.
    return PostgresStore.open(parsed.url, { onNote: options.note ?? ((m) => process.stderr.write(`pulse: ${m}\n`)) });
  }
  const { SqliteStore } = await import("./sqlite/store.js");
  return new SqliteStore(resolve(options.cwd ?? process.cwd(), parsed.path), { display: parsed.path, ...(options.readonly ? { readonly: true } : {}) });
}
