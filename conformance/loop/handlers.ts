/**
 * The phase handlers a loop is certified with: the user's module (`--handlers module.js`), and
 * pulse's recording handlers for every phase the module does not cover. Each handler is wrapped
 * so the harness sees every invocation (its input, output or error) and can bend one the way a
 * test needs: fail a few times, or patch the output so that a trigger's or an emit condition's
 * `when` holds.
 *
 * A handlers module (ESM) exports either
 *   - `handlers` (or its default export): an object from a phase id, or "<loop_id>/<phase_id>",
 *     to a handler; and optionally `kinds`: an object from a phase kind or custom_kind to a
 *     handler, as `runtime.handle` and `runtime.handleKind` take them; or
 *   - a default export that is a function: called with `{ handle, handleKind }`, it registers
 *     handlers itself (it may be async).
 */
import { pathToFileURL } from "node:url";
import { recordingHandler } from "../../src/host/index.js";
import type { PhaseContext, PhaseHandler, TokenName } from "../../src/index.js";
import { runningPhase } from "./substrates.js";

export class HandlersError extends Error {}

export interface HandlerModule {
  /** The module as given, or "recording". */
  source: string;
  handlers: Map<string, PhaseHandler>;
  kinds: Map<string, PhaseHandler>;
}

export const RECORDING_ONLY: HandlerModule = { source: "recording", handlers: new Map(), kinds: new Map() };

function table(value: unknown, what: string, into: Map<string, PhaseHandler>): void {
  if (value === undefined) return;
  if (value === null || typeof value !== "object") throw new HandlersError(`${what} must be an object of handlers, got ${value === null ? "null" : typeof value}`);
  for (const [name, handler] of Object.entries(value)) {
    if (typeof handler !== "function") throw new HandlersError(`${what}.${name} must be a function (a phase handler), got ${handler === null ? "null" : typeof handler}`);
    into.set(name, handler as PhaseHandler);
  }
}

export async function loadHandlerModule(file: string): Promise<HandlerModule> {
  let mod: Record<string, unknown>;
  try {
    mod = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ERR_MODULE_NOT_FOUND" && String((e as Error).message).includes(file)) throw new HandlersError(`cannot find the module ${file}`);
    throw new HandlersError(`the module ${file} failed to load: ${(e as Error).message}`);
  }
  const module: HandlerModule = { source: file, handlers: new Map(), kinds: new Map() };
  if (typeof mod.default === "function") {
    try {
      await (mod.default as (r: unknown) => unknown)({
        handle: (name: string, handler: PhaseHandler) => table({ [name]: handler }, "handle()", module.handlers),
        handleKind: (kind: string, handler: PhaseHandler) => table({ [kind]: handler }, "handleKind()", module.kinds),
      });
    } catch (e) {
      if (e instanceof HandlersError) throw e;
      throw new HandlersError(`the default export of ${file} failed while registering handlers: ${(e as Error).message}`);
    }
  } else {
    table(mod.handlers ?? mod.default, mod.handlers !== undefined ? "handlers" : "the default export", module.handlers);
    table(mod.kinds, "kinds", module.kinds);
  }
  if (module.handlers.size === 0 && module.kinds.size === 0) {
    throw new HandlersError(`${file} exports no handler: export \`handlers\` (phase id → function), \`kinds\`, or a default function that registers them (docs/conformance/loops.md)`);
  }
  return module;
}

/** One run of a phase handler, as the harness saw it. */
export interface Invocation {
  loop_id: string;
  phase_id: string;
  kind: string;
  trace_id: string;
  workspace_id: string;
  input: unknown;
  output?: unknown;
  error?: string;
  /** Real time (ms) it began and ended, for ordering. */
  began: number;
  ended?: number;
}

type PhaseKey = string;
export const phaseKey = (loopId: string, phaseId: string): PhaseKey => `${loopId}/${phaseId}`;

/** Records invocations and applies the bends a test asked for. */
export class HandlerRecorder {
  readonly invocations: Invocation[] = [];
  /** Phases whose next N invocations throw. */
  readonly failures = new Map<PhaseKey, number>();
  /** Phases whose handler throws after it ran (its writes made): the phase must leave nothing behind. */
  readonly failAfter = new Set<PhaseKey>();
  /** Phases whose outputs are patched after the handler ran. */
  readonly patches = new Map<PhaseKey, (output: unknown, ctx: PhaseContext) => unknown>();

  wrap(base: PhaseHandler): PhaseHandler {
    return async (ctx) => {
      const key = phaseKey(ctx.loop_id, ctx.phase.id);
      const inv: Invocation = { loop_id: ctx.loop_id, phase_id: ctx.phase.id, kind: ctx.phase.kind, trace_id: ctx.trace_id, workspace_id: ctx.workspace_id, input: ctx.input, began: performance.now() };
      this.invocations.push(inv);
      try {
        const left = this.failures.get(key) ?? 0;
        if (left > 0) {
          this.failures.set(key, left - 1);
          throw new Error("failure injected by pulse-conform --loop");
        }
        let output = await runningPhase.run({ loop_id: ctx.loop_id, phase_id: ctx.phase.id, trace_id: ctx.trace_id, workspace_id: ctx.workspace_id }, () => base(ctx));
        if (this.failAfter.has(key)) throw new Error("failure injected by pulse-conform --loop after the handler ran");
        const patch = this.patches.get(key);
        if (patch) output = patch(output, ctx);
        inv.output = output;
        return output;
      } catch (e) {
        inv.error = (e as Error).message;
        throw e;
      } finally {
        inv.ended = performance.now();
      }
    };
  }

  of(loopId: string, phaseId?: string): Invocation[] {
    return this.invocations.filter((i) => i.loop_id === loopId && (phaseId === undefined || i.phase_id === phaseId));
  }
}

/** The handler for one phase: the module's, resolved as the runtime resolves its own, else recording. */
export function handlerFor(module: HandlerModule, loopId: string, phase: { id: string; kind: string; custom_kind?: string }, emits: (loopId: string, phaseId: string) => TokenName[]): { handler: PhaseHandler; origin: "module" | "recording" } {
  const found = module.handlers.get(phaseKey(loopId, phase.id)) ?? module.handlers.get(phase.id) ?? (phase.custom_kind ? module.kinds.get(phase.custom_kind) : undefined) ?? module.kinds.get(phase.kind);
  return found ? { handler: found, origin: "module" } : { handler: recordingHandler({ emits }), origin: "recording" };
}
