/**
 * Which driver calls a test has made and which are still waiting: what a driver failure says
 * about where it happened ("test 1 …, at driver call 23 of the test: phase.invoke failed, still waiting for phase.invoke").
 */
import { DriverFailure, type Driver } from "../driver/driver.js";
import type { Method, Methods } from "../driver/protocol.js";

export class StepTracker implements Driver {
  readonly describe: string;
  private sent = 0;
  private readonly waiting = new Map<number, string>();
  private lastAnswered: string | undefined;
  private broke: string | undefined;

  constructor(private readonly inner: Driver) {
    this.describe = inner.describe;
  }

  call<M extends Method>(method: M, params: Methods[M][0], options?: { timeoutMs?: number }): Promise<Methods[M][1]> {
    const n = ++this.sent;
    this.waiting.set(n, method);
    return this.inner.call(method, params, options).then(
      (result) => {
        this.waiting.delete(n);
        this.lastAnswered = method;
        return result;
      },
      (e: unknown) => {
        this.waiting.delete(n);
        // A RuntimeError is an answer (tests assert on it); a DriverFailure is where the run broke.
        if (e instanceof DriverFailure) this.broke ??= method;
        else this.lastAnswered = method;
        throw e;
      },
    );
  }

  stderrTail(): string[] {
    return this.inner.stderrTail();
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  /** Where the test is: its call count, the calls still waiting, the last one answered. */
  where(): string {
    if (this.sent === 0) return "before its first driver call";
    const counts = new Map<string, number>();
    for (const method of this.waiting.values()) counts.set(method, (counts.get(method) ?? 0) + 1);
    const waiting = [...counts].map(([method, n]) => (n > 1 ? `${method} ×${n}` : method)).join(", ");
    const broke = this.broke ? `: ${this.broke} failed` : "";
    return `at driver call ${this.sent} of the test${broke}${waiting ? `, ${broke ? "still " : ""}waiting for ${waiting}` : ""}${this.lastAnswered ? ` (last answered: ${this.lastAnswered})` : ""}`;
  }
}
