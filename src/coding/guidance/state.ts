/**
 * `.pulse/state.json` (seed 004's PulseState, schema 2): the hashes the ledger last recorded and
 * the last acknowledgement, written whole by rename so a reader never sees half a file. Every
 * read-modify-write of the ledger and the state holds the directory's lock, so a watcher, the
 * MCP server and `pulse guidance ack` in other processes never record one change twice or lose
 * an acknowledgement.
 */
import { randomBytes } from "node:crypto";
import { closeSync, openSync, readFileSync, renameSync, rmSync, writeFileSync, writeSync } from "node:fs";
import type { WatchedFile } from "./files.js";
import { pidAlive } from "../liveness.js";

export interface GuidanceState {
  schema_version: 2;
  project_root: string;
  initialized_at: string;
  last_hashes: Partial<Record<WatchedFile, string | null>>;
  last_acknowledged_event_id: string | null;
  last_acknowledged_plan_sha256: string | null;
  last_acknowledged_at: string | null;
}

export class GuidanceStateError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "GuidanceStateError";
  }
}

export function freshState(root: string, hashes: GuidanceState["last_hashes"], now = new Date()): GuidanceState {
  return { schema_version: 2, project_root: root, initialized_at: now.toISOString(), last_hashes: hashes, last_acknowledged_event_id: null, last_acknowledged_plan_sha256: null, last_acknowledged_at: null };
}

/** The state, or undefined when there is none yet; a damaged file is an error naming it. */
export function readState(file: string): GuidanceState | undefined {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw e;
  }
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new GuidanceStateError(`${file} is not JSON (${(e as Error).message}): move it aside and run pulse guidance init`);
  }
  const s = v as Partial<GuidanceState>;
  if (!s || typeof s !== "object" || typeof s.last_hashes !== "object" || s.last_hashes === null) throw new GuidanceStateError(`${file} is not a guidance state (no last_hashes): move it aside and run pulse guidance init`);
  return { ...freshState(String(s.project_root ?? ""), {}), ...s, schema_version: 2 } as GuidanceState;
}

/** Written to a temporary file beside it, then renamed over it. */
export function writeState(file: string, state: GuidanceState): void {
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(state, null, 2)}\n`);
  try {
    renameSync(tmp, file);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
}

/**
 * Holds `lockFile` (created exclusively, holding our pid) while `fn` runs. A lock whose process
 * is gone is taken over; a live holder is waited for, up to `waitMs`.
 */
export async function withLock<T>(lockFile: string, fn: () => T | Promise<T>, waitMs = 10_000): Promise<T> {
  const deadline = Date.now() + waitMs;
  for (let delay = 2; ; delay = Math.min(delay * 2, 50)) {
    try {
      const fd = openSync(lockFile, "wx");
      writeSync(fd, String(process.pid));
      closeSync(fd);
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
      const holder = Number(readOr(lockFile));
      if (holder > 0 && !pidAlive(holder)) {
        rmSync(lockFile, { force: true });
        continue;
      }
      if (Date.now() > deadline) throw new GuidanceStateError(`${lockFile} is held by process ${holder || "?"} for more than ${waitMs / 1000} s`);
      await new Promise((r) => setTimeout(r, delay));
    }
  }
  try {
    return await fn();
  } finally {
    rmSync(lockFile, { force: true });
  }
}

function readOr(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return "";
  }
}
