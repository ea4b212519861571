/**
 * What a loop test works with: the subject, what a first iteration of the loop showed (the
 * profile: which phases ran, with which inputs, which of them wrote memory or called which
 * substrate), fresh sessions on pulse's runtime, and the record of its checks. Shaped like the
 * runtime suite's TestContext, so the runner turns either into a TestResult the same way.
 */
import type { IterationResult } from "../../src/index.js";
import type { MutantName } from "../../src/runtime/mutants.js";
import type { Check, Evidence } from "../report/types.js";
import type { Invocation } from "./handlers.js";
import { LoopSession, type SessionOptions } from "./session.js";
import { MUTATIONS, type LoopCall } from "./substrates.js";
import { loopId, type LoopSubject } from "./subject.js";

export interface LoopProfile {
  /** The first iteration of the loop, from phases[0], with the subject's input. */
  result: IterationResult;
  /** Its handler invocations (the loop under test only), in order. */
  invocations: Invocation[];
  /** Substrate calls made while it ran (every loop), in order. */
  calls: LoopCall[];
  /** Phases of the loop under test by id. */
  phases: Map<string, { id: string; kind: string; custom_kind?: string; idempotent?: boolean; on_failure?: string; invariant?: string }>;
  /** The input each phase got in that iteration. */
  inputOf(phaseId: string): unknown;
  /** Phases whose handler changed memory. */
  writers: string[];
  /** Phases that completed (replays included). */
  completed: string[];
  /** Phases recording handlers played (the module had none for them). */
  recorded: string[];
}

const WORKSPACE = "ws_profile";

export async function profile(subject: LoopSubject): Promise<LoopProfile> {
  const session = await LoopSession.open(subject);
  try {
    const result = await session.run({ workspace: WORKSPACE, traceId: "c0f0ffff00000000000000000000000f" });
    await session.settle();
    const id = loopId(subject.manifest);
    const invocations = session.recorder.of(id).filter((i) => i.workspace_id === WORKSPACE && i.trace_id === result.trace_id);
    const calls = [...session.substrates.calls];
    const writers = [...new Set(calls.filter((c) => c.handler?.loop_id === id && c.slot === "memory" && MUTATIONS.has(c.operation) && !c.error).map((c) => c.handler!.phase_id))];
    return {
      result,
      invocations,
      calls,
      phases: new Map((subject.manifest.phases as { id: string; kind: string }[]).map((p) => [p.id, p])),
      inputOf: (phaseId) => invocations.find((i) => i.phase_id === phaseId)?.input,
      writers,
      completed: result.phases.filter((p) => p.status === "completed" || p.status === "replayed").map((p) => p.phase_id),
      recorded: session.recorded.get(id) ?? [],
    };
  } finally {
    await session.close();
  }
}

export class LoopContext {
  readonly checks: Check[] = [];
  readonly evidence: Evidence = {};
  notTested: string | undefined;
  private readonly sessions: LoopSession[] = [];

  constructor(
    readonly subject: LoopSubject,
    readonly profile: LoopProfile,
    /** Every session of the test runs this broken runtime (the loop tests' self-test). */
    private readonly mutant?: MutantName,
  ) {}

  get loopId(): string {
    return loopId(this.subject.manifest);
  }

  /** A fresh runtime for (part of) the test; closed by close(). */
  async open(options: SessionOptions = {}): Promise<LoopSession> {
    const session = await LoopSession.open(this.subject, { ...options, ...(this.mutant ? { mutant: this.mutant } : {}) });
    this.sessions.push(session);
    return session;
  }

  async close(): Promise<void> {
    await Promise.all(this.sessions.splice(0).map((s) => s.close()));
  }

  check(description: string, holds: boolean, expected: unknown, observed: unknown): boolean {
    this.checks.push({ description, outcome: holds ? "pass" : "fail", expected, observed });
    return holds;
  }

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

/** The audit events among calls, as the audit substrate received them. */
export function auditEvents(calls: readonly LoopCall[]): { event_type: string; trace_id: string; loop_id: string; phase_id: string | null; workspace_id: string; timestamp?: unknown; signature?: unknown }[] {
  return calls.filter((c) => c.slot === "audit" && c.operation === "append_event" && !c.error).map((c) => (c.args as { event: never }).event);
}

/** Polls `ready` until it holds or `ms` of real time passed. */
export async function until(ready: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!ready()) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 10));
  }
  return true;
}
