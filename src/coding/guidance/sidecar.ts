/**
 * One project's guidance sidecar: `init`, a scan (one iteration of `coding.guidance_watch` on
 * the runtime), `shouldInterrupt`, `ack`, the context and the log. Every scan and every
 * acknowledgement holds the `.pulse/` directory's lock (other processes) and this object's queue
 * (this one), so an acknowledgement is judged against the ledger as it is at that moment: a
 * change recorded after it stays pending.
 */
import { createHash } from "node:crypto";
import { createRuntime } from "../../embedded.js";
import type { Runtime } from "../../runtime/runtime.js";
import type { Loop } from "../../runtime/loop.js";
import { packageFile } from "../session/profile.js";
import { compileContext } from "./context.js";
import { readEvents, type GuidanceEvent } from "./events.js";
import { createExclusive, digestFile, ensureDir, guidancePaths, readText, snapshotFiles, TEMPLATES, WATCHED_FILES, type GuidancePaths, type WatchedFile } from "./files.js";
import { GUIDANCE_PHASES, guidanceHandlers, type Tracked } from "./handlers.js";
import { judgeAck, shouldInterrupt, type AckDecision, type InterruptDecision } from "./policy.js";
import { freshState, readState, withLock, writeState, type GuidanceState } from "./state.js";

export const GUIDANCE_LOOP_ID = "coding.guidance_watch";
export const GUIDANCE_MANIFEST = "manifests/coding/guidance-watch.yaml";

/** Loads the guidance loop into a runtime (once) with its handlers. */
export async function guidanceLoop(runtime: Runtime): Promise<Loop> {
  const existing = runtime.loop(GUIDANCE_LOOP_ID);
  if (existing) return existing;
  const handlers = guidanceHandlers();
  for (const phase of GUIDANCE_PHASES) runtime.handle(`${GUIDANCE_LOOP_ID}/${phase}`, handlers[phase]);
  return runtime.load(packageFile(GUIDANCE_MANIFEST));
}

export interface InitResult {
  dir: string;
  created: string[];
  kept: string[];
}

/** Creates `.pulse/` with the four files, the ledger and the state; what exists is kept as it is. */
export function initGuidance(paths: GuidancePaths): InitResult {
  ensureDir(paths);
  const created: string[] = [];
  const kept: string[] = [];
  for (const f of WATCHED_FILES) (createExclusive(paths.file(f), TEMPLATES[f]) ? created : kept).push(f);
  (createExclusive(paths.events, "") ? created : kept).push("events.jsonl");
  // The first state takes the files as they are: what init finds is the baseline, not a change.
  const hashes = Object.fromEntries(Object.entries(snapshotFiles(paths)).map(([f, d]) => [f, d?.sha256 ?? null])) as GuidanceState["last_hashes"];
  (createExclusive(paths.state, `${JSON.stringify(freshState(paths.root, hashes), null, 2)}\n`) ? created : kept).push("state.json");
  return { dir: paths.dir, created, kept };
}

export class GuidanceError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "GuidanceError";
  }
}

export class GuidanceSidecar {
  private queue: Promise<unknown> = Promise.resolve();

  private constructor(
    readonly paths: GuidancePaths,
    private readonly loop: Loop,
    private readonly workspace: string,
  ) {}

  /** The sidecar of `root`'s `.pulse/` (or of `dir`), on `runtime` (a fresh in-memory one by default). */
  static async open(options: { root: string; dir?: string; runtime?: Runtime }): Promise<GuidanceSidecar> {
    const paths = guidancePaths(options.root, options.dir);
    const runtime = options.runtime ?? (await createRuntime());
    const loop = await guidanceLoop(runtime);
    return new GuidanceSidecar(paths, loop, `guidance_${createHash("sha256").update(paths.dir).digest("hex").slice(0, 16)}`);
  }

  init(): InitResult {
    return initGuidance(this.paths);
  }

  /** Whether `init` has run here (the state exists). */
  initialized(): boolean {
    return readState(this.paths.state) !== undefined;
  }

  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.queue.then(() => withLock(this.paths.lock, fn));
    this.queue = next.catch(() => undefined);
    return next;
  }

  private requireInit(): void {
    if (!this.initialized()) throw new GuidanceError(`${this.paths.dir} has no guidance state: run pulse guidance init first`);
  }

  private async scanLocked(): Promise<Tracked> {
    const result = await this.loop.runIteration({ workspace: this.workspace, input: { root: this.paths.root, dir: this.paths.dir } });
    if (result.status !== "completed") throw new GuidanceError(`the guidance scan ended ${result.status}: ${result.error?.message ?? "no reason given"}`);
    return result.output as Tracked;
  }

  /** Records what changed since the last scan; returns the new events and the interrupt state. */
  scan(): Promise<Tracked> {
    this.requireInit();
    return this.exclusive(() => this.scanLocked());
  }

  /** `pulse_should_interrupt`: scans first, so a change the watcher has not settled yet counts. */
  async shouldInterrupt(lastSeen?: string | null): Promise<InterruptDecision> {
    await this.scan();
    const { events } = readEvents(this.paths.events);
    return shouldInterrupt(events, this.state(), lastSeen);
  }

  /**
   * `pulse_ack_replan`: accepted only for the current pending event, recorded with plan.md's
   * SHA-256 as it is at that moment (state.json written by rename).
   */
  ack(eventId: string | null | undefined): Promise<AckDecision> {
    this.requireInit();
    return this.exclusive(async () => {
      await this.scanLocked();
      const state = this.state();
      const { events } = readEvents(this.paths.events);
      const decision = judgeAck(events, state, eventId, digestFile(this.paths.file("plan.md"))?.sha256 ?? null);
      if (decision.accepted) writeState(this.paths.state, { ...state, last_acknowledged_event_id: decision.acknowledged_event_id, last_acknowledged_plan_sha256: decision.plan_sha256, last_acknowledged_at: new Date().toISOString() });
      return decision;
    });
  }

  /** `pulse://context/latest`. */
  async context(recent = 20): Promise<string> {
    const decision = await this.shouldInterrupt();
    const files = Object.fromEntries(WATCHED_FILES.map((f) => [f, digestFile(this.paths.file(f)) ? readText(this.paths.file(f)) : null])) as Record<WatchedFile, string | null>;
    return compileContext({ decision, files, recent: this.events().slice(-recent) });
  }

  events(): GuidanceEvent[] {
    return readEvents(this.paths.events).events;
  }

  state(): GuidanceState {
    const s = readState(this.paths.state);
    if (!s) throw new GuidanceError(`${this.paths.dir} has no guidance state: run pulse guidance init first`);
    return s;
  }
}
