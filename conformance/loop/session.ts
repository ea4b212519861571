/**
 * One fresh pulse host for one test of a loop: the loop under test, its companions and stand-ins
 * (or the replacements a test asks for) loaded over recording substrates, every phase handled by
 * the subject's handlers (or a stand-in's script), each handler wrapped by the recorder. The host
 * is not started: no cadence fires on its own, so every iteration is one the test began, or one
 * a signal or an inner-loop trigger began.
 */
import { createHost, type Host } from "../../src/host/index.js";
import { systemClock, type IterationRequest, type IterationResult, type Loop } from "../../src/index.js";
import { withMutant, type MutantName } from "../../src/runtime/mutants.js";
import { scriptedHandler } from "../adapters/pulse/script.js";
import { handlerFor, HandlerRecorder } from "./handlers.js";
import { LoopSubstrates } from "./substrates.js";
import { emitsOf, loopId, type LoadedManifest, type LoopSubject } from "./subject.js";

export interface SessionOptions {
  /** Loops to load instead of the ones with the same loop_id (a scripted inner loop, say). */
  replace?: LoadedManifest[];
  /** Loops to load beside the others (a scripted sender). */
  add?: LoadedManifest[];
  circuit?: { failureThreshold: number; cooldownMs: number };
  /** A deliberately broken runtime (the self-test of the loop tests). */
  mutant?: MutantName;
}

export class LoopSession {
  readonly recorder = new HandlerRecorder();
  readonly substrates = new LoopSubstrates(() => Date.now());
  /** Phases that ran pulse's recording handlers because the module had none for them, by loop. */
  readonly recorded = new Map<string, string[]>();
  private constructor(
    readonly host: Host,
    readonly subject: LoopSubject,
  ) {}

  static async open(subject: LoopSubject, o: SessionOptions = {}): Promise<LoopSession> {
    // Mutants are switched on through the runtime's internal entry, never its public options.
    const host = await createHost(withMutant({ clock: systemClock, onEscalation: () => undefined, ...(o.circuit ? { circuit: o.circuit } : {}) }, o.mutant));
    const session = new LoopSession(host, subject);
    const replaced = new Set((o.replace ?? []).map((r) => loopId(r.manifest)));
    const all: LoadedManifest[] = [{ file: subject.file, manifest: subject.manifest }, ...subject.companions, ...subject.standIns, ...(o.add ?? [])].filter((m) => !replaced.has(loopId(m.manifest)));
    all.push(...(o.replace ?? []));
    const emits = emitsOf(all.map((m) => m.manifest));
    const counters = new Map<string, number>();
    for (const m of all) {
      const loop = await host.load(m.manifest, { substrates: session.substrates.set });
      for (const phase of m.manifest.phases as { id: string; kind: string; custom_kind?: string }[]) {
        if (m.scripts !== undefined) {
          loop.handle(phase.id, session.recorder.wrap(scriptedHandler(m.scripts[phase.id] ?? { output: phase.kind === "act" ? { causal_parent_ids: [] } : {} }, counters)));
          continue;
        }
        const { handler, origin } = handlerFor(subject.handlers, loop.id, phase, emits);
        if (origin === "recording") session.recorded.set(loop.id, [...(session.recorded.get(loop.id) ?? []), phase.id]);
        loop.handle(phase.id, session.recorder.wrap(handler));
      }
    }
    return session;
  }

  get loop(): Loop {
    return this.host.loop(loopId(this.subject.manifest))!;
  }

  /**
   * An iteration of the loop under test (or another loaded loop), in a workspace of the test's
   * choosing. Started on the loop itself, not through host.trigger: a manual cadence's rate_limit
   * is about who may trigger the loop, none of the twelve tests' business.
   */
  run(request: IterationRequest & { loop?: string }): Promise<IterationResult> {
    const { loop, ...rest } = request;
    return this.host.loop(loop ?? this.loop.id)!.runIteration({ input: this.subject.input, ...rest });
  }

  /** One phase of the loop under test, invoked directly inside the iteration the trace id names. */
  async invoke(phaseId: string, request: { workspace: string; traceId: string; input?: unknown }) {
    return (await this.loop.invokePhase(phaseId, request)).outcome;
  }

  /** Waits until nothing the host started is still running (signals and the iterations they start). */
  async settle(): Promise<void> {
    await this.host.settled();
  }

  async close(): Promise<void> {
    await this.host.stop({ timeoutMs: 2_000 });
  }
}
