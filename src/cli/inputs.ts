/**
 * What every command that reads manifests and writes files shares: numeric flags, operands
 * (files, directories, globs, stdin) turned into parsed sources, and atomic output files.
 */
import { chmod, lstat, realpath, rename, rm, stat, writeFile } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { parseSourceBytes, readSource, SourceReadError, type ManifestSource } from "../source/load.js";
import { expandOperands } from "./expand-paths.js";
import { UsageError } from "./exit-codes.js";
import type { CliIO } from "./io.js";

function countFiles(n: number): string {
  return `${n} JSON/YAML file${n === 1 ? "" : "s"}`;
}

export function parseCount(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value.trim())) throw new UsageError(`${flag} takes a non-negative integer, not "${value}"`);
  return Number(value);
}

/** What reading the operands left out: JSON/YAML files of a searched directory that are not manifests. */
export interface ReadReport {
  skipped: string[];
}

/**
 * Reads every manifest the operands name; a missing file, an unmatched glob or a misused `-` is a
 * usage error. Files a directory search skipped are added to `report` when one is given.
 */
export async function readManifestSources(operands: readonly string[], stdinFilename: string | undefined, io: CliIO, maxBytes: number, report?: ReadReport): Promise<ManifestSource[]> {
  if (operands.length === 0) throw new UsageError("no manifest given: pass files, directories, globs, or - for stdin (see --help)");
  if (stdinFilename !== undefined && !operands.includes("-")) throw new UsageError("--stdin-filename only applies when - (stdin) is an operand");
  if (operands.filter((o) => o === "-").length > 1) throw new UsageError("stdin (-) can only be read once");
  const expansion = await expandOperands(operands.filter((o) => o !== "-"), io.cwd);
  if (expansion.unmatched.length > 0) {
    const hint = expansion.skipped.length > 0 ? ` (${countFiles(expansion.skipped.length)} found that ${expansion.skipped.length === 1 ? "is" : "are"} not PULSE manifests: no pulse_protocol_version or loop_id)` : "";
    throw new UsageError(`no manifest matched ${expansion.unmatched.map((u) => `"${u}"`).join(", ")}${hint}`);
  }
  report?.skipped.push(...expansion.skipped);
  const sources: ManifestSource[] = [];
  if (operands.includes("-")) sources.push(await parseSourceBytes(stdinFilename ?? "<stdin>", await io.readStdin(maxBytes), { maxBytes, streamed: true }));
  for (const file of expansion.files) {
    try {
      sources.push({ ...(await readSource(resolve(io.cwd, file), { maxBytes })), file });
    } catch (e) {
      if (e instanceof SourceReadError) throw new UsageError(e.message.replace(resolve(io.cwd, file), file));
      throw e;
    }
  }
  return sources;
}

/**
 * Writes an output file so that an interrupted or refused run never leaves a truncated one:
 * write a sibling, then rename it over the target. What is at the path decides the details: a
 * symlink is followed (its target is replaced, the link stays), a replaced file keeps its mode,
 * and anything that is not a regular file (a pipe, /dev/stdout, /dev/null) is written in place,
 * since renaming over it would replace the device itself.
 */
export async function writeAtomically(file: string, shown: string, text: string): Promise<void> {
  let target = file;
  let mode: number | undefined;
  try {
    const existing = await stat(file); // follows symlinks
    if (existing.isDirectory()) throw Object.assign(new Error("directory"), { code: "EISDIR" });
    if (!existing.isFile()) return await writeInPlace(file, shown, text);
    target = await realpath(file);
    mode = existing.mode & 0o7777;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException)?.code;
    if (e instanceof UsageError) throw e;
    if (code === "ENOENT") {
      // Nothing there yet, or a dangling symlink: writing through it creates what it names.
      if ((await lstat(file).catch(() => undefined))?.isSymbolicLink()) return await writeInPlace(file, shown, text);
    } else {
      throw writeError(shown, e);
    }
  }
  const tmp = join(dirname(target), `.${basename(target)}.${process.pid}.tmp`);
  try {
    await writeFile(tmp, text);
    if (mode !== undefined) await chmod(tmp, mode);
    await rename(tmp, target);
  } catch (e) {
    await rm(tmp, { force: true });
    throw writeError(shown, e);
  }
}

async function writeInPlace(file: string, shown: string, text: string): Promise<void> {
  try {
    await writeFile(file, text);
  } catch (e) {
    throw writeError(shown, e);
  }
}

function writeError(shown: string, e: unknown): UsageError {
  const code = (e as NodeJS.ErrnoException)?.code;
  const reason =
    code === "ENOENT" ? "no such directory" : code === "EACCES" || code === "EPERM" ? "permission denied" : code === "EISDIR" ? "it is a directory" : code === "ENOSPC" ? "no space left on the device" : (code ?? String(e));
  return new UsageError(`cannot write ${shown}: ${reason}`);
}
