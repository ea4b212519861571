/** Exit codes of pulse-validate (actionlint's convention, which users already script against). */
export const EXIT = {
  ok: 0,
  problems: 1,
  usage: 2,
  internal: 3,
} as const;

/** A mistake in how the command was called: message printed, exit 2, no stack trace. */
export class UsageError extends Error {}
