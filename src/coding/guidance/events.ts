/**
 * The append-only event ledger `.pulse/events.jsonl` (seed 004): one JSON line per change of a
 * watched file, `{id, timestamp, kind, path, sha256, size}`. Ids are `evt_<UTC time>_<8 hex>`,
 * so they sort by time and two changes in the same microsecond still differ. The ledger is data
 * for tools, never instructions: a line that does not parse is skipped and reported, never
 * trusted or fatal (a torn last line from a crash is the usual case).
 */
import { randomBytes } from "node:crypto";
import { appendFileSync, closeSync, fstatSync, openSync, readFileSync, readSync } from "node:fs";
import { GUIDANCE_DIR, WATCHED_FILES, type FileDigest, type WatchedFile } from "./files.js";

export type ChangeKind = "created" | "modified" | "deleted";

export interface GuidanceEvent {
  id: string;
  timestamp: string;
  kind: ChangeKind;
  /** `.pulse/guidance.md`: relative to the project, as the seed writes it. */
  path: string;
  sha256: string | null;
  size: number | null;
}

/** A watched file whose content differs from what the ledger last recorded. */
export interface FileChange {
  file: WatchedFile;
  kind: ChangeKind;
  digest: FileDigest | null;
}

const ID = /^evt_\d{8}T\d{12}Z_[0-9a-f]{8}$/;

/** `evt_20261126T211500123456Z_1a2b3c4d`: the seed's format (microseconds, then 8 random hex digits). */
export function eventId(at: Date = new Date(), micros = 0, random: string = randomBytes(4).toString("hex")): string {
  const iso = at.toISOString(); // 2026-11-26T21:15:00.123Z
  const stamp = `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}T${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}${iso.slice(20, 23)}${String(micros % 1000).padStart(3, "0")}Z`;
  return `evt_${stamp}_${random}`;
}

export function isEventId(text: string): boolean {
  return ID.test(text);
}

export function eventPath(file: WatchedFile): string {
  return `${GUIDANCE_DIR}/${file}`;
}

/**
 * What changed between the hashes the ledger last recorded and the files now (the scan of seed
 * 004): a file that appeared is created, one that went is deleted, any other new hash modified.
 * A burst of edits that ends where it started is no change.
 */
export function diffFiles(last: Partial<Record<WatchedFile, string | null>>, now: Record<WatchedFile, FileDigest | null>): FileChange[] {
  const changes: FileChange[] = [];
  for (const file of WATCHED_FILES) {
    const before = last[file] ?? null;
    const after = now[file];
    if (before === (after?.sha256 ?? null)) continue;
    changes.push({ file, kind: before === null ? "created" : after === null ? "deleted" : "modified", digest: after });
  }
  return changes;
}

/** The events for a scan's changes, ids in order (one clock reading, a counter for the microseconds). */
export function eventsFor(changes: readonly FileChange[], at: Date = new Date()): GuidanceEvent[] {
  const micro = Number(process.hrtime.bigint() / 1000n) % 1000;
  return changes.map((c, i) => ({ id: eventId(at, micro + i), timestamp: at.toISOString(), kind: c.kind, path: eventPath(c.file), sha256: c.digest?.sha256 ?? null, size: c.digest?.size ?? null }));
}

/** Parses the ledger; lines that are not events are left out and counted. */
export function parseEvents(text: string): { events: GuidanceEvent[]; skipped: number } {
  const events: GuidanceEvent[] = [];
  let skipped = 0;
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    try {
      const e = JSON.parse(line) as GuidanceEvent;
      if (typeof e?.id === "string" && typeof e.path === "string" && (e.kind === "created" || e.kind === "modified" || e.kind === "deleted")) events.push(e);
      else skipped++;
    } catch {
      skipped++;
    }
  }
  return { events, skipped };
}

export function readEvents(file: string): { events: GuidanceEvent[]; skipped: number } {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return { events: [], skipped: 0 };
    throw e;
  }
  return parseEvents(text);
}

/** One write with O_APPEND: concurrent appenders never interleave within a line. */
export function appendEvents(file: string, events: readonly GuidanceEvent[]): void {
  if (events.length === 0) return;
  // A line torn by a crash is closed first, so it costs only itself, not the next event too.
  const lead = endsTorn(file) ? "\n" : "";
  appendFileSync(file, lead + events.map((e) => `${JSON.stringify({ id: e.id, timestamp: e.timestamp, kind: e.kind, path: e.path, sha256: e.sha256, size: e.size })}\n`).join(""));
}

/** Events after `id`; all of them when `id` is null or unknown (the seed's rule). */
export function eventsAfter(events: readonly GuidanceEvent[], id: string | null | undefined): GuidanceEvent[] {
  if (!id) return [...events];
  const i = events.findIndex((e) => e.id === id);
  return i < 0 ? [...events] : events.slice(i + 1);
}

function endsTorn(file: string): boolean {
  let fd: number;
  try {
    fd = openSync(file, "r");
  } catch {
    return false;
  }
  try {
    const size = fstatSync(fd).size;
    if (size === 0) return false;
    const last = Buffer.alloc(1);
    readSync(fd, last, 0, 1, size - 1);
    return last[0] !== 0x0a;
  } finally {
    closeSync(fd);
  }
}
