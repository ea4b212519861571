/**
 * A run's report: one JSONL file per run (`<logs>/<runId>.jsonl`, one envelope a line), written
 * through a stream whose congestion is seed 002's backpressure: while the stream is over its
 * high-water mark, `plan_updated` and `run_summary` are dropped (and counted); every other type,
 * `decision`, `action_result`, `feedback_received`, `progress_evaluated` and `run_finished`
 * among them, is always written. Opening a report rotates the directory to the latest N runs.
 */
import { createWriteStream, mkdirSync, readdirSync, readFileSync, rmSync, statSync, type WriteStream } from "node:fs";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { DROPPABLE, ENVELOPE_TYPES, type Envelope, type EnvelopeType } from "./types.js";

export interface ReportWriterOptions {
  /** Bytes the stream buffers before it counts as congested (default 64 KiB). */
  highWaterMark?: number;
  /** Runs kept in the directory, this one included (default 100). */
  keepLastRuns?: number;
}

export class ReportWriter {
  readonly path: string;
  private readonly stream: WriteStream;
  private congested = false;
  readonly dropped: Partial<Record<EnvelopeType, number>> = {};
  private closed?: Promise<void>;

  constructor(
    readonly dir: string,
    readonly runId: string,
    options: ReportWriterOptions = {},
  ) {
    mkdirSync(dir, { recursive: true });
    this.path = join(dir, `${runId}.jsonl`);
    this.stream = createWriteStream(this.path, { flags: "a", highWaterMark: options.highWaterMark ?? 64 * 1024 });
    this.stream.on("drain", () => (this.congested = false));
    // A failing disk must not crash the run: the events stay in the audit trail.
    this.stream.on("error", () => undefined);
    rotateReports(dir, options.keepLastRuns ?? 100, this.path);
  }

  /** Writes one envelope, or drops it when it may be dropped and the stream is congested. Returns whether it was written. */
  write(event: Envelope): boolean {
    if (this.closed) return false;
    if (this.congested && DROPPABLE.includes(event.type)) {
      this.dropped[event.type] = (this.dropped[event.type] ?? 0) + 1;
      return false;
    }
    if (!this.stream.write(`${JSON.stringify(event)}\n`)) this.congested = true;
    return true;
  }

  close(): Promise<void> {
    this.closed ??= new Promise<void>((resolve) => this.stream.end(() => resolve()));
    return this.closed;
  }
}

export function envelope(type: EnvelopeType, payload: Record<string, unknown>, now: () => Date = () => new Date()): Envelope {
  return { type, id: randomUUID(), ts: now().toISOString(), payload };
}

/** Keeps the `keep` newest reports of `dir` (by modification time, then name), `current` (perhaps not written yet) always among them. */
export function rotateReports(dir: string, keep: number, current?: string): string[] {
  const others = readdirSync(dir)
    .filter((f) => f.endsWith(".jsonl") && join(dir, f) !== current)
    .map((f) => ({ path: join(dir, f), mtime: statSync(join(dir, f)).mtimeMs }))
    .sort((a, b) => b.mtime - a.mtime || b.path.localeCompare(a.path));
  const removed = others.slice(Math.max(0, keep - (current ? 1 : 0))).map((f) => f.path);
  for (const path of removed) rmSync(path, { force: true });
  return removed;
}

export class ReportError extends Error {}

/** Reads a report back: every line one envelope; a malformed line is named by its number. */
export function readReport(path: string): Envelope[] {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    throw new ReportError(`${path}: ${(e as NodeJS.ErrnoException).code === "ENOENT" ? "no such report" : (e as Error).message}`);
  }
  const events: Envelope[] = [];
  const lines = text.split("\n");
  lines.forEach((line, i) => {
    if (!line.trim()) return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      // A run killed mid-write leaves a torn last line: it is no event, the rest still is.
      if (i === lines.length - 1) return;
      throw new ReportError(`${path}:${i + 1}: not JSON`);
    }
    const e = value as Envelope;
    if (!e || typeof e !== "object" || !(ENVELOPE_TYPES as readonly string[]).includes(e.type) || typeof e.id !== "string" || typeof e.ts !== "string") throw new ReportError(`${path}:${i + 1}: not an envelope {type,id,ts,payload}`);
    events.push(e);
  });
  return events;
}
