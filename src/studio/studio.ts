/**
 * The studio's model of what the host runs: each loop's card (status, cadence, last
 * iteration), its timeline and telemetry, traces by id (held rows, else the store's audit
 * trail), and the controls, which act through the host. Host events reach the live feed as
 * they come; the loops never wait for a browser (feed.ts).
 */
import type { Host } from "../host/host.js";
import type { HostEvent } from "../host/host-events.js";
import type { PhaseHandler } from "../runtime/handler-context.js";
import type { Store, StoredAuditEvent } from "../store/contracts.js";
import { Feed, type FeedEvent } from "./feed.js";
import { LoopHistory, type IterationRow } from "./loop-history.js";

export interface LoopCard {
  id: string;
  name: string | null;
  file: string | null;
  status: string;
  cadence: { type: string; params: Record<string, unknown> };
  phases: { id: string; kind: string }[];
  iterations: number;
  last: { iteration: number; status: string; trace_id: string; started_at: number; duration_ms?: number } | null;
}

/** Host events every page gets, whatever it shows. */
const GLOBAL = new Set(["loop.status_changed", "circuit.state_changed", "signal.delivered", "store.failed"]);

/**
 * The host's handler, with each phase's input and output kept for the trace view by the studio
 * `current()` answers (made once the host exists, so read late).
 */
export function capturing(inner: PhaseHandler, current: () => Studio | undefined): PhaseHandler {
  return async (ctx) => {
    const output = await inner(ctx);
    current()?.history.capture(ctx.trace_id, ctx.phase.id, ctx.input, output);
    return output;
  };
}

/** An iteration read back from the store's journal: its input and each committed phase's output (JSON text, cut to 8 KiB). */
export interface StoredIteration {
  loop_id: string;
  workspace_id: string;
  input: string;
  phases: { phase_id: string; status: string; signature: string; next: string | null; output: string }[];
}

const capped = (v: unknown): string => {
  const text = JSON.stringify(v) ?? "null";
  return text.length > 8192 ? `${text.slice(0, 8192)}… (${text.length - 8192} more characters)` : text;
};

export class StudioError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Host events the page is sent. Phase starts and completions are not (they are most of a busy
 * host's events): an iteration's cells travel once, with its end; failures and retries as they come.
 */
const FORWARDED = new Set(["iteration.started", "iteration.finished", "iteration.resolved", "phase.failed", "phase.retrying", "invariant.violated", "circuit.state_changed", "loop.status_changed", "signal.delivered", "signal.dropped", "store.failed", "escalation"]);

export class Studio {
  readonly feed: Feed;
  readonly history = new LoopHistory();
  private readonly files = new Map<string, string>();
  private unsubscribe: () => void;
  private dirty = true;
  private ticker: NodeJS.Timeout;

  constructor(
    readonly host: Host,
    readonly store: Store,
    readonly svg: string,
    options: { feed?: Feed; cardsMs?: number } = {},
  ) {
    this.feed = options.feed ?? new Feed();
    this.unsubscribe = host.subscribe((e) => this.observe(e));
    // The system view follows every loop through these snapshots, not through each iteration's
    // events: what it costs stays flat however fast the loops go.
    this.ticker = setInterval(() => {
      if (!this.dirty || this.feed.clients === 0) return;
      this.dirty = false;
      this.feed.publish("cards", { loops: this.cards() });
    }, options.cardsMs ?? 500);
    this.ticker.unref();
  }

  /** Which events a page gets: with a loop, that loop's; without, the cards, runs and loops' status changes. */
  static scope(loopId: string | undefined): (e: FeedEvent) => boolean {
    if (loopId !== undefined) return (e) => e.type !== "host" || (e.data as { loop_id?: string }).loop_id === loopId;
    return (e) => e.type !== "host" || GLOBAL.has((e.data as { type: string }).type);
  }

  private observe(e: HostEvent): void {
    const row = this.history.observe(e);
    if (!FORWARDED.has(e.type)) return;
    this.dirty = true;
    if (e.type === "iteration.finished" && row) this.feed.publish("host", { ...e, phases: row.phases.map((c) => ({ phase_id: c.phase_id, status: c.status, duration_ms: c.duration_ms, ...(c.error ? { error: c.error } : {}) })) });
    else this.feed.publish("host", e);
  }

  nameFile(loopId: string, file: string): void {
    this.files.set(loopId, file);
  }

  cards(): LoopCard[] {
    return this.host.loops.map((loop) => this.card(loop.id));
  }

  card(loopId: string): LoopCard {
    const loop = this.host.loop(loopId);
    if (!loop) throw new StudioError(404, "NOT_FOUND", `no loop ${loopId} in this studio (loaded: ${this.host.loops.map((l) => l.id).join(", ") || "none"})`);
    const m = loop.compiled.manifest;
    const last = this.history.lastIteration(loopId);
    return {
      id: loop.id,
      name: m.loop_name ?? null,
      file: this.files.get(loopId) ?? null,
      status: loop.status(),
      cadence: { type: m.cadence.type, params: (m.cadence.params ?? {}) as Record<string, unknown> },
      phases: m.phases.map((p) => ({ id: p.id, kind: p.kind === "custom" ? (p.custom_kind ?? "custom") : p.kind })),
      iterations: loop.telemetry().iteration_count,
      last: last ? { iteration: last.iteration, status: last.status, trace_id: last.trace_id, started_at: last.started_at, ...(last.duration_ms !== undefined ? { duration_ms: last.duration_ms } : {}) } : null,
    };
  }

  loopView(loopId: string): { card: LoopCard; rows: IterationRow[]; telemetry: unknown; percentiles: unknown; circuits: Record<string, string> } {
    const card = this.card(loopId);
    const loop = this.host.loop(loopId)!;
    const circuits = this.history.circuits(loopId);
    for (const slot of ["memory", "policy", "audit", "auth", "time"] as const) {
      const state = loop.circuit(slot);
      if (state !== undefined) circuits[slot] = state;
    }
    return { card, rows: this.history.rows(loopId), telemetry: loop.telemetry(), percentiles: this.history.percentiles(loopId), circuits };
  }

  /** pause, resume and stop act on the loop through the host; trigger runs one iteration now. */
  async control(loopId: string, action: string): Promise<{ status: string; trace_id?: string; iteration?: number; result?: string }> {
    const loop = this.host.loop(loopId);
    if (!loop) throw new StudioError(404, "NOT_FOUND", `no loop ${loopId} in this studio`);
    if (action === "pause") this.host.pause(loopId);
    else if (action === "resume") this.host.resume(loopId);
    else if (action === "stop") loop.stop();
    else if (action === "trigger") {
      const run = this.host.trigger(loopId, { cause: { trigger: "manual", via: "studio" } });
      // Answered once it finished, or after a second with the iteration still running.
      const done = await Promise.race([run.then((r) => ({ r })), new Promise<undefined>((r) => setTimeout(() => r(undefined), 1000).unref())]).catch((e: Error & { code?: string }) => {
        throw new StudioError(409, e.code ?? "REFUSED", e.message);
      });
      void run.catch(() => undefined);
      if (done) return { status: loop.status(), trace_id: done.r.trace_id, iteration: done.r.iteration, result: done.r.status };
    } else throw new StudioError(404, "NOT_FOUND", `no action ${action} (pause, resume, stop, trigger)`);
    return { status: loop.status() };
  }

  /** One iteration by trace id: the held row with its phases, and the audit events the store keeps of it. */
  async trace(traceId: string): Promise<{ row: IterationRow | null; audit: StoredAuditEvent[]; journal?: StoredIteration }> {
    if (!/^[0-9a-f]{32}$/.test(traceId)) throw new StudioError(400, "BAD_TRACE_ID", `a trace id is 32 lowercase hex digits, not ${JSON.stringify(traceId.slice(0, 40))}`);
    const page = await this.store.queryAudit({ trace_id: traceId, limit: 500 });
    const row = this.history.trace(traceId) ?? null;
    if (!row && page.events.length === 0) throw new StudioError(404, "NOT_FOUND", `no iteration with trace id ${traceId} is held here or in the store's audit trail`);
    const audit = page.events.map(({ position: _p, ...e }) => e);
    // Older than what is held (or from an earlier run): each phase's output from the store's journal.
    const first = audit[0]?.event;
    const journal = !row && first && this.store.journal ? await this.store.journal(first.loop_id, first.workspace_id, traceId) : undefined;
    return { row, audit, ...(journal ? { journal: { loop_id: first!.loop_id, workspace_id: first!.workspace_id, input: capped(journal.input), phases: journal.phases.map((p) => ({ phase_id: p.phase_id, status: p.status, signature: p.signature, next: p.next, output: capped(p.output) })) } } : {}) };
  }

  search(q: string): IterationRow[] {
    return this.history.search(q).map((r) => ({ ...r, phases: r.phases.map(({ input: _i, output: _o, ...c }) => c) }));
  }

  close(): void {
    clearInterval(this.ticker);
    this.unsubscribe();
    this.feed.closeAll();
  }
}
