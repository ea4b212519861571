/** Errors of the PostgreSQL store: a code to act on and one line a person can read. */
export class PostgresStoreError extends Error {
  override readonly name = "PostgresStoreError";
  constructor(
    readonly code: "STORE_UNAVAILABLE" | "STORE_TOO_NEW" | "STORE_NOT_MIGRATED" | "STORE_UNSAFE_ROLE" | "STORE_MIGRATION_FAILED" | "STORE_NO_WORKSPACE",
    message: string,
  ) {
    super(message);
  }
}

/** A pg or socket error in one line: its message, and the SQLSTATE or errno when there is one. */
export function describePgError(error: unknown): string {
  const e = error as { message?: string; code?: string; errors?: { message?: string }[] };
  // An AggregateError (every address refused) has an empty message of its own.
  const message = e?.message || e?.errors?.map((x) => x.message).join("; ") || String(error);
  return e?.code && !message.includes(e.code) ? `${message} (${e.code})` : message;
}
