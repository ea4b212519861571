/**
 * What a session command refuses (no such session, finished, running, locked). Its own module so
 * that the CLI can recognise it without loading the session runner.
 */
export class SessionError extends Error {
  constructor(
    readonly code: "NOT_FOUND" | "FINISHED" | "RUNNING" | "LOCKED",
    message: string,
  ) {
    super(message);
    this.name = "SessionError";
  }
}
