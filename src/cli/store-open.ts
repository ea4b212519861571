/**
 * Opening the store a command was given (`--store sqlite:PATH | memory:`), with its refusals (a
 * locked, corrupt, newer or unwritable file; a bad spec) said in one line.
 */
import { StoreError, type Store } from "../store/contracts.js";
import type { CliIO } from "./io.js";
import { UsageError } from "./exit-codes.js";

import { DEFAULT_STORE, spellStoreSpec } from "../store/contracts.js";

export { DEFAULT_STORE };

/**
 * The opened store, or undefined once the refusal was printed (exit 1). `flag`: where the spec
 * came from (`--store`, `PULSE_STORE`): a PostgreSQL store that cannot be used at start (the
 * server unreachable, the schema not migrated) is then a usage error naming it (exit 2), as
 * `--fleet` and `--transport` are.
 */
export async function openStoreForCli(spec: string, io: CliIO, command: string, options: { readonly?: boolean; memoryWithoutDriver?: boolean; flag?: string } = {}): Promise<Store | undefined> {
  const { openStore } = await import("../../adapters/store.js");
  try {
    return await openStore(spec, { cwd: io.cwd, ...(options.readonly ? { readonly: true } : {}) });
  } catch (error) {
    // The default store on an install without the optional SQLite driver: the run still runs.
    if (error instanceof StoreError && error.code === "STORE_DRIVER_MISSING" && options.memoryWithoutDriver) {
      io.stderr(`${command}: note: keeping nothing after this run: ${error.message}\n`);
      return openStore("memory:");
    }
    if (error instanceof StoreError && options.flag !== undefined && /^postgres(ql)?:\/\//.test(spec)) throw new UsageError(`${options.flag}: ${error.message}`);
    if (error instanceof StoreError) {
      io.stderr(`${command}: ${error.message}\n`);
      return undefined;
    }
    throw error;
  }
}

/** The spec a command was given, else $PULSE_STORE, else the default; a plain path spelled `sqlite:PATH`. */
export function storeSpec(given: string | undefined, io: CliIO): string {
  return spellStoreSpec(given ?? (io.env.PULSE_STORE || DEFAULT_STORE));
}
