/**
 * Opening the store a command was given (`--store sqlite:PATH | memory:`), with its refusals (a
 * locked, corrupt, newer or unwritable file; a bad spec) said in one line.
 */
import { StoreError, type Store } from "../store/contracts.js";
import type { CliIO } from "./io.js";

import { DEFAULT_STORE } from "../store/contracts.js";

export { DEFAULT_STORE };

/** The opened store, or undefined once the refusal was printed (exit 1). */
export async function openStoreForCli(spec: string, io: CliIO, command: string, options: { readonly?: boolean } = {}): Promise<Store | undefined> {
  const { openStore } = await import("../../adapters/store.js");
  try {
    return await openStore(spec, { cwd: io.cwd, ...options });
  } catch (error) {
    if (error instanceof StoreError) {
      io.stderr(`${command}: ${error.message}\n`);
      return undefined;
    }
    throw error;
  }
}

/** The spec a command was given, else $PULSE_STORE, else the default. */
export function storeSpec(given: string | undefined, io: CliIO): string {
  return given ?? (io.env.PULSE_STORE || DEFAULT_STORE);
}
