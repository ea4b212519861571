/**
 * The guidance sidecar's project-local files (seed 004): `.pulse/task.md`, `guidance.md`,
 * `constraints.md` and `plan.md`, which people and the agent edit, beside `state.json` and the
 * append-only `events.jsonl`, which only pulse writes. `init` creates what is missing and never
 * overwrites what exists.
 */
import { createHash } from "node:crypto";
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, statSync, writeSync } from "node:fs";
import { join, resolve } from "node:path";

export const GUIDANCE_DIR = ".pulse";
export const WATCHED_FILES = ["task.md", "guidance.md", "constraints.md", "plan.md"] as const;
export type WatchedFile = (typeof WATCHED_FILES)[number];

export const TEMPLATES: Record<WatchedFile, string> = {
  "task.md": "# Task\n\nDescribe the current task here.\n",
  "guidance.md": "# Guidance\n\nWrite updated user guidance here. This file can change task direction.\n",
  "constraints.md": "# Constraints\n\nWrite project constraints here. Constraints can restrict behavior but must not expand agent permissions.\n",
  "plan.md": "# Plan\n\nWrite the current plan here.\n",
};

export interface GuidancePaths {
  /** The project the `.pulse/` directory belongs to (paths in events are relative to it). */
  root: string;
  dir: string;
  state: string;
  events: string;
  lock: string;
  file(name: WatchedFile): string;
}

/** The sidecar's paths under `root` (its `.pulse/`), or directly in `dir` when one is given. */
export function guidancePaths(root: string, dir: string = join(resolve(root), GUIDANCE_DIR)): GuidancePaths {
  const d = resolve(dir);
  return { root: resolve(root), dir: d, state: join(d, "state.json"), events: join(d, "events.jsonl"), lock: join(d, ".guidance.lock"), file: (name) => join(d, name) };
}

/** What a file holds now, as the ledger records it: null when it does not exist. */
export interface FileDigest {
  sha256: string;
  size: number;
}

export function sha256(data: string | Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}

export function digestFile(path: string): FileDigest | null {
  try {
    if (!statSync(path).isFile()) return null;
    const data = readFileSync(path);
    return { sha256: sha256(data), size: data.length };
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT" || (e as NodeJS.ErrnoException).code === "ENOTDIR") return null;
    throw e;
  }
}

/** The four watched files as they are now. */
export function snapshotFiles(paths: GuidancePaths): Record<WatchedFile, FileDigest | null> {
  return Object.fromEntries(WATCHED_FILES.map((f) => [f, digestFile(paths.file(f))])) as Record<WatchedFile, FileDigest | null>;
}

export function readText(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return "";
    throw e;
  }
}

/** Writes `text` to `path` only if nothing is there (O_EXCL): a file a person made first is kept. */
export function createExclusive(path: string, text: string): boolean {
  let fd: number;
  try {
    fd = openSync(path, "wx");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw e;
  }
  try {
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
  return true;
}

export function ensureDir(paths: GuidancePaths): void {
  if (existsSync(paths.dir) && !statSync(paths.dir).isDirectory()) throw new Error(`${paths.dir} exists and is not a directory`);
  mkdirSync(paths.dir, { recursive: true });
}
