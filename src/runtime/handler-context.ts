/**
 * What a phase handler is given (PhaseContext) and what it is (PhaseHandler): the handler-facing
 * side of a phase attempt. The context is a class so the per-phase allocation stays cheap
 * (getters on the prototype), and its abort signal is made only when a handler asks for it.
 */
import type { BoundSubstrateSet } from "../substrates/contracts.js";
import type { Token } from "../tokens/types.js";
import type { Clock } from "./clock.js";
import type { CompiledPhase } from "./compiled-loop.js";
import type { IterationContext } from "./iteration-context.js";
import type { PhaseScope } from "./phase-scope.js";

/**
 * What a handler is given. `I` is the type of its input, as the handler's author knows it (the
 * previous phase's output, or the iteration's input): `runtime.handle<{ query: string }>(…)`.
 * The runtime does not check it; a canonical token's type (`OutcomeSignal`, …) is validated
 * where tokens are.
 */
export interface PhaseContext<I = unknown> {
  input: I;
  phase: CompiledPhase["phase"];
  loop_id: string;
  workspace_id: string;
  trace_id: string;
  /** 1-based iteration number in this workspace. */
  iteration: number;
  /** 0 for the first attempt, then 1, 2, … on retries. */
  attempt: number;
  signature: string;
  /** Aborted when the phase times out or the host stops. */
  signal: AbortSignal;
  /** The loop's substrates, with this iteration's trace_id and workspace on every call. */
  substrates: BoundSubstrateSet;
  /** Tokens seen so far in this iteration (latest of each kind). */
  tokens: readonly Token[];
  clock: Clock;
}

/** A phase handler: its input typed `I`, its output (JSON data) `O`, returned or resolved. */
export type PhaseHandler<I = unknown, O = unknown> = (ctx: PhaseContext<I>) => O | Promise<O>;

/** What a handler receives. */
export class HandlerContext implements PhaseContext {
  readonly phase: CompiledPhase["phase"];
  readonly workspace_id: string;
  readonly trace_id: string;
  readonly iteration: number;

  constructor(
    readonly input: unknown,
    compiled: CompiledPhase,
    readonly loop_id: string,
    private readonly it: IterationContext,
    readonly attempt: number,
    readonly signature: string,
    private readonly controller: LazyAbort,
    private readonly scope: PhaseScope,
    readonly clock: Clock,
  ) {
    this.phase = compiled.phase;
    this.workspace_id = it.workspaceId;
    this.trace_id = it.traceId;
    this.iteration = it.number;
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get substrates(): BoundSubstrateSet {
    return this.scope.substrates;
  }

  get tokens(): readonly Token[] {
    return this.it.tokens.all();
  }
}

/** An AbortController made only when someone asks for its signal: most phases never do. */
export class LazyAbort {
  private controller: AbortController | undefined;
  private reason: unknown;

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.reason !== undefined) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  abort(reason: unknown): void {
    if (this.reason !== undefined) return;
    this.reason = reason;
    this.controller?.abort(reason);
  }
}

