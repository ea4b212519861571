/**
 * The runtime: register phase handlers, load manifests (validated; an invalid one is refused with
 * its diagnostics), bind substrates through the registry, run iterations. It depends on the
 * substrate contracts only: the embedded default adapters are bound where the program is
 * assembled (src/embedded.ts, whose `createRuntime` is what the package exports).
 *
 *   const runtime = await createRuntime();
 *   runtime.handle("retrieve_ctx", async ({ input, substrates }) => …);
 *   const loop = await runtime.load("manifests/graphonomous.continual_learning.yaml");
 *   const result = await loop.runIteration({ workspace: "ws_1", input: { query: "…" } });
 */
import type { Manifest } from "../manifest/types.js";
import { readSource } from "../source/load.js";
import type { SubstrateSet } from "../substrates/contracts.js";
import { SubstrateRegistry } from "../substrates/registry.js";
import { validateSources, validateValue } from "../validator/validate.js";
import type { FileResult } from "../validator/diagnostic.js";
import { DEFAULT_CIRCUIT, type CircuitOptions } from "./circuit-breaker.js";
import { systemClock, type Clock } from "./clock.js";
import { compileLoop, type CompiledPhase } from "./compiled-loop.js";
import { ManifestRejectedError, PulseError } from "./errors.js";
import { EventStream, type Listener } from "./events.js";
import { IdempotencyCache } from "./idempotency.js";
import { Loop, type LoopHooks } from "./loop.js";
import { buildLoopMachine, LoopStepper } from "./machine.js";
import type { PhaseHandler } from "./handler-context.js";
import { initSignatures } from "./signature.js";
import { mutantOf, type MutantName } from "./mutants.js";
import { Journal } from "./journal.js";
import type { Store } from "../store/contracts.js";

export interface RuntimeOptions {
  clock?: Clock;
  /**
   * Scheme → adapter bindings. `createRuntime` adds the embedded defaults under whatever is
   * registered here: http(s) URIs to the HTTP substrate client, every other URI in memory.
   */
  registry?: SubstrateRegistry;
  /** Idempotency cache entries kept per workspace (least recently used go first). */
  idempotencyCacheSize?: number;
  /** Actor and agent id the policy and auth substrates see for act phases (unless the input carries agent_id). */
  agentId?: string;
  retry?: { baseMs?: number; maxMs?: number };
  circuit?: Partial<CircuitOptions>;
  /** Used for phases no other handler covers (e.g. `pulse run`'s recording handlers). */
  defaultHandler?: PhaseHandler;
  hooks?: LoopHooks;
  /**
   * Where iterations are journaled (src/store/contracts.ts): each phase commits there as one unit,
   * and a loaded loop continues where the store says the last run stopped. None: nothing is kept.
   */
  store?: Store;
}

export interface LoadOptions {
  /** §7.5 quorum_threshold for this loop (default 0.66): host configuration, not a manifest field. */
  quorumThreshold?: number;
  /** Substrates for this loop, overriding the registry per slot. */
  substrates?: Partial<SubstrateSet>;
  /** When a substrate's circuit is open: end the iteration and degrade ("pause", default) or skip the phase. */
  onSubstrateUnavailable?: "pause" | "skip";
  /** Name used in diagnostics for an in-memory manifest. */
  name?: string;
  /** Treat the §3.2 structure warnings as errors. */
  strict?: boolean;
}

export const DEFAULT_QUORUM_THRESHOLD = 0.66;

export class Runtime {
  readonly clock: Clock;
  readonly registry: SubstrateRegistry;
  readonly events = new EventStream();
  private readonly loops = new Map<string, Loop>();
  private readonly byPhase = new Map<string, PhaseHandler>();
  private readonly byKind = new Map<string, PhaseHandler>();
  private readonly idempotency: IdempotencyCache;
  /** The conformance self-test's broken variant, if one is switched on (mutants.ts). */
  private readonly mutant: MutantName | undefined;

  /** A runtime bound to exactly the registry given; `createRuntime` (src/embedded.ts) adds the embedded defaults. */
  constructor(private readonly options: RuntimeOptions = {}) {
    this.clock = options.clock ?? systemClock;
    this.registry = options.registry ?? new SubstrateRegistry();
    this.mutant = mutantOf(options);
    this.idempotency = new IdempotencyCache(options.idempotencyCacheSize, this.mutant === "tenantless-cache");
  }

  /**
   * Handler for a phase id (in any loop), or `"<loop_id>/<phase_id>"` for one loop only. Type
   * parameters name its input and output: `runtime.handle<{ query: string }>("retrieve_ctx", …)`.
   */
  handle<I = unknown, O = unknown>(phase: string, handler: PhaseHandler<I, O>): this {
    this.byPhase.set(phase, handler as PhaseHandler);
    return this;
  }

  /** Handler for every phase of a kind (`act`) or custom kind (`negotiate`) without its own handler. */
  handleKind<I = unknown, O = unknown>(kind: string, handler: PhaseHandler<I, O>): this {
    this.byKind.set(kind, handler as PhaseHandler);
    return this;
  }

  private resolveHandler(loop: Loop, phase: CompiledPhase): PhaseHandler | undefined {
    return (
      this.byPhase.get(`${loop.id}/${phase.id}`) ??
      this.byPhase.get(phase.id) ??
      (phase.kind === "custom" ? this.byKind.get(phase.label) : undefined) ??
      this.byKind.get(phase.kind) ??
      this.options.defaultHandler
    );
  }

  /** Validates and loads a manifest (a path, or the parsed document). */
  async load(manifest: string | Manifest | Record<string, unknown>, options: LoadOptions = {}): Promise<Loop> {
    await initSignatures();
    let result: FileResult;
    let value: unknown;
    if (typeof manifest === "string") {
      const source = await readSource(manifest);
      result = validateSources([source], { strict: options.strict === true })[0] as FileResult;
      value = source.value;
    } else {
      result = validateValue(manifest, options.name ?? "<manifest>", { strict: options.strict === true });
      value = manifest;
    }
    // Cross-manifest references are the host's concern; a single loop only needs to be valid.
    if (!result.valid && this.mutant !== "no-validation") throw new ManifestRejectedError(result.file, result.diagnostics);
    const compiled = compileLoop(structuredClone(value) as Manifest);
    if (this.loops.has(compiled.loopId)) throw new PulseError("LOOP_EXISTS", `loop ${compiled.loopId} is already loaded in this runtime`);
    const bound = this.registry.bind(compiled.manifest.substrates as unknown as Record<string, string | null>);
    const substrates: SubstrateSet = { ...bound, ...options.substrates } as SubstrateSet;
    const loop = new Loop(
      {
        compiled,
        substrates,
        clock: this.clock,
        idempotency: this.idempotency,
        quorumThreshold: options.quorumThreshold ?? DEFAULT_QUORUM_THRESHOLD,
        agentId: this.options.agentId ?? "pulse-runtime",
        retry: { baseMs: this.options.retry?.baseMs ?? 100, maxMs: this.options.retry?.maxMs ?? 10_000 },
        circuit: { ...DEFAULT_CIRCUIT, ...this.options.circuit },
        onSubstrateUnavailable: options.onSubstrateUnavailable ?? "pause",
        resolveHandler: (l, phase) => this.resolveHandler(l, phase),
        hooks: this.options.hooks ?? {},
        events: this.events,
        mutant: this.mutant,
        journal: this.options.store ? new Journal(this.options.store, compiled.loopId, substrates) : undefined,
      },
      new LoopStepper(buildLoopMachine(compiled)),
    );
    await loop.recover();
    this.loops.set(loop.id, loop);
    return loop;
  }

  /** The store iterations are journaled in, if any. */
  get store(): Store | undefined {
    return this.options.store;
  }

  loop(loopId: string): Loop | undefined {
    return this.loops.get(loopId);
  }

  get loaded(): Loop[] {
    return [...this.loops.values()];
  }

  /** Events of every loaded loop. */
  subscribe(listener: Listener): () => void {
    return this.events.subscribe(listener);
  }
}
