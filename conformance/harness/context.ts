/**
 * What a conformance test works with: the driver, the observer, a fresh runtime per test, time
 * (virtual when the runtime offers it, real otherwise), and a record of its checks. A test is a
 * function of this context; the runner turns the record into a TestResult.
 */
import type { Driver } from "../driver/driver.js";
import type { ConfigureParams, ObservedCall, PhaseScript } from "../driver/protocol.js";
import type { Check, Evidence } from "../report/types.js";
import type { Observer } from "./observer.js";
import { StepTracker } from "./steps.js";
import type { AuditEvent } from "../../src/substrates/contracts.js";

export class TestContext {
  readonly checks: Check[] = [];
  readonly evidence: Evidence = {};
  notTested: string | undefined;
  /** The driver as the test uses it: every call counted, so a failure can say where it happened. */
  readonly driver: Driver;
  readonly steps: StepTracker;

  constructor(
    driver: Driver,
    readonly observer: Observer,
    readonly timing: "virtual" | "real",
    readonly mutant: string | undefined,
    /** Manifests given with --manifest: test 12 certifies that the runtime loads each. */
    readonly manifests: readonly { file: string; value: Record<string, unknown> }[] = [],
  ) {
    this.steps = new StepTracker(driver);
    this.driver = this.steps;
  }

  /** A fresh runtime bound to the observer's substrates. */
  async configure(extra: Partial<ConfigureParams> = {}): Promise<void> {
    await this.driver.call("configure", { substrate_url: this.observer.substrateUrl, clock: this.timing, ...(this.mutant ? { mutant: this.mutant } : {}), ...extra });
    await this.observer.reset();
  }

  async load(manifest: Record<string, unknown>, scripts: Record<string, PhaseScript> = {}): Promise<string> {
    return (await this.driver.call("manifest.load", { manifest, scripts })).loop_id;
  }

  /** Lets `ms` of loop time pass: the virtual clock in steps (so timers fire in order), or real sleep. */
  async advance(ms: number, step = 100): Promise<void> {
    if (this.timing === "real") {
      await new Promise((r) => setTimeout(r, ms));
      return;
    }
    for (let done = 0; done < ms; done += step) {
      await this.driver.call("clock.advance", { ms: Math.min(step, ms - done) });
      await new Promise((r) => setImmediate(r));
    }
  }

  /** Runs `work` while time passes in steps until it settles (or `maxMs` of loop time). */
  async whileAdvancing<T>(work: Promise<T>, maxMs: number, step = 100): Promise<T> {
    let settled = false;
    const watched = work.finally(() => (settled = true));
    watched.catch(() => undefined);
    for (let t = 0; t < maxMs && !settled; t += step) await this.advance(step, step);
    return watched;
  }

  async calls(): Promise<ObservedCall[]> {
    return this.observer.calls();
  }

  /** The audit events the runtime appended, as its audit substrate received them. */
  async auditEvents(): Promise<AuditEvent[]> {
    return (await this.calls()).filter((c) => c.slot === "audit" && c.operation === "append_event" && !c.error).map((c) => (c.args as { event: AuditEvent }).event);
  }

  check(description: string, holds: boolean, expected: unknown, observed: unknown): boolean {
    this.checks.push({ description, outcome: holds ? "pass" : "fail", expected, observed });
    return holds;
  }

  warn(description: string, expected: unknown, observed: unknown): void {
    this.checks.push({ description, outcome: "warn", expected, observed });
  }

  /** The test's precondition was not exercised: the result is not_tested, never passed. */
  skip(reason: string): void {
    this.notTested = reason;
  }

  note(text: string): void {
    (this.evidence.notes ??= []).push(text);
  }

  attach(audit: unknown[], calls: unknown[]): void {
    this.evidence.audit_events = audit.slice(-30);
    this.evidence.substrate_calls = calls.slice(-30);
  }
}

/** W3C trace ids the harness chooses, so it knows which calls belong to which iteration. */
export function traceId(n: number, salt = 0): string {
  return `c0f0${(salt & 0xffff).toString(16).padStart(4, "0")}${n.toString(16).padStart(24, "0")}`.slice(0, 32);
}
