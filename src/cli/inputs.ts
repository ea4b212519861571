/**
 * What every command that reads manifests and writes files shares: numeric flags, operands
 * (files, directories, globs, stdin) turned into parsed sources, and atomic output files.
 */
import { rename, rm, writeFile } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { parseSourceBytes, readSource, SourceReadError, type ManifestSource } from "../source/load.js";
import { expandOperands } from "./expand-paths.js";
import { UsageError } from "./exit-codes.js";
import type { CliIO } from "./io.js";

export function parseCount(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value.trim())) throw new UsageError(`${flag} takes a non-negative integer, not "${value}"`);
  return Number(value);
}

/** Reads every manifest the operands name; a missing file, an unmatched glob or a misused `-` is a usage error. */
export async function readManifestSources(operands: readonly string[], stdinFilename: string | undefined, io: CliIO, maxBytes: number): Promise<ManifestSource[]> {
  if (operands.length === 0) throw new UsageError("no manifest given: pass files, directories, globs, or - for stdin (see --help)");
  if (stdinFilename !== undefined && !operands.includes("-")) throw new UsageError("--stdin-filename only applies when - (stdin) is an operand");
  if (operands.filter((o) => o === "-").length > 1) throw new UsageError("stdin (-) can only be read once");
  const expansion = await expandOperands(operands.filter((o) => o !== "-"), io.cwd);
  if (expansion.unmatched.length > 0) throw new UsageError(`no manifest matched ${expansion.unmatched.map((u) => `"${u}"`).join(", ")}`);
  const sources: ManifestSource[] = [];
  if (operands.includes("-")) sources.push(await parseSourceBytes(stdinFilename ?? "<stdin>", await io.readStdin(), { maxBytes }));
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

/** Write-then-rename: an interrupted or refused run never leaves a truncated file behind. */
export async function writeAtomically(file: string, shown: string, text: string): Promise<void> {
  const tmp = join(dirname(file), `.${basename(file)}.${process.pid}.tmp`);
  try {
    await writeFile(tmp, text);
    await rename(tmp, file);
  } catch (e) {
    await rm(tmp, { force: true });
    const code = (e as NodeJS.ErrnoException)?.code;
    const reason = code === "ENOENT" ? "no such directory" : code === "EACCES" || code === "EPERM" ? "permission denied" : code === "EISDIR" ? "it is a directory" : (code ?? String(e));
    throw new UsageError(`cannot write ${shown}: ${reason}`);
  }
}
