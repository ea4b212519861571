/**
 * Turns bytes into a parsed manifest source: format detection, UTF-8 checks, size limits.
 * Nothing here throws on bad content; it becomes a positioned problem. Only I/O failures
 * (missing or unreadable files) throw, as SourceReadError, because they are usage errors.
 */
import { constants } from "node:fs";
import { open, stat, type FileHandle } from "node:fs/promises";
import { extname } from "node:path";
import { LineIndex } from "./line-index.js";
import { parseJsonc, type ParsedSource, type SourceProblem } from "./jsonc.js";
import type { SourceNode } from "./source-node.js";

export type SourceFormat = "json" | "yaml";

export interface ManifestSource {
  file: string;
  format: SourceFormat;
  text: string;
  lines: LineIndex;
  /** The parsed document; undefined when it could not be parsed. */
  value: unknown;
  root?: SourceNode;
  problems: SourceProblem[];
  /**
   * The parser's word on non-finite numbers in `value` (ParsedSource.nonFinite): false lets the
   * validator skip its walk for them; absent (a source built by hand) means unknown.
   */
  nonFinite?: boolean;
}

export const DEFAULT_MAX_BYTES = 1024 * 1024;

export class SourceReadError extends Error {
  constructor(
    readonly file: string,
    message: string,
  ) {
    super(message);
  }
}

export function formatForFile(file: string): SourceFormat | undefined {
  const ext = extname(file).toLowerCase();
  if (ext === ".json" || ext === ".jsonc") return "json";
  if (ext === ".yaml" || ext === ".yml") return "yaml";
  return undefined;
}

/** JSON documents start with `{` or `[` once comments and whitespace are skipped. */
export function sniffFormat(text: string): SourceFormat {
  const m = /^(?:\s|\/\/[^\n]*\n|\/\*[\s\S]*?\*\/)*/.exec(text);
  const first = text[m ? m[0].length : 0];
  return first === "{" || first === "[" ? "json" : "yaml";
}

function fileProblem(file: string, rule: string, message: string, text = ""): ManifestSource {
  const format = formatForFile(file) ?? "yaml";
  return { file, format, text, lines: new LineIndex(text), value: undefined, problems: [{ rule, message, start: 0, end: 0, severity: "error" }] };
}

/** Bytes below 1 KiB: a 10-byte limit rounded up to "1 KiB" would misstate it a hundredfold. */
function formatBytes(n: number): string {
  if (n >= 1024 * 1024) return `${(n / 1024 / 1024).toFixed(1)} MiB`;
  if (n >= 1024) return `${Math.ceil(n / 1024)} KiB`;
  return `${n} byte${n === 1 ? "" : "s"}`;
}

/** `size` is undefined when the input was read as a stream and stopped at the limit: its size is unknown. */
function tooLarge(file: string, size: number | undefined, maxBytes: number): ManifestSource {
  const what = size === undefined ? "is over the limit" : `is ${formatBytes(size)}`;
  return fileProblem(file, "input/too-large", `the file ${what}; manifests are limited to ${formatBytes(maxBytes)} (raise it with --max-file-size)`);
}

const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

/** `streamed`: the bytes were read up to just past the limit (stdin), so their count is not the size. */
export async function parseSourceBytes(file: string, bytes: Uint8Array, options: { maxBytes?: number; format?: SourceFormat; streamed?: boolean } = {}): Promise<ManifestSource> {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  if (bytes.length > maxBytes) return tooLarge(file, options.streamed ? undefined : bytes.length, maxBytes);
  if (bytes.length >= 2 && ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff))) {
    return fileProblem(file, "input/encoding", "the file is UTF-16; save it as UTF-8");
  }
  if (bytes.includes(0)) return fileProblem(file, "input/binary", "the file contains NUL bytes: it looks binary, not a JSON or YAML manifest");
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    return fileProblem(file, "input/encoding", "the file is not valid UTF-8 text");
  }
  const format = options.format ?? formatForFile(file) ?? sniffFormat(text);
  if (format === "json") return sourceFromText(file, text, format, parseJsonc);
  // The YAML package costs ~30 ms to import: only a YAML document pays for it.
  const { parseYaml } = await import("./yaml-source.js");
  return sourceFromText(file, text, format, parseYaml);
}

/**
 * Text already in memory, parsed with `parse`. The public, synchronous `parseSourceText` (any
 * format) is in parse-text.ts; this one lets the CLI load the YAML parser only when needed.
 */
export function sourceFromText(file: string, text: string, format: SourceFormat, parse: (text: string) => ParsedSource): ManifestSource {
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  const lines = new LineIndex(text);
  if (text.trim() === "") {
    return { file, format, text, lines, value: undefined, problems: [{ rule: "input/empty", message: "the file is empty", start: 0, end: 0, severity: "error" }] };
  }
  const parsed = parse(text);
  const source: ManifestSource = { file, format, text, lines, value: parsed.value, problems: parsed.problems };
  if (parsed.root) source.root = parsed.root;
  if (parsed.nonFinite !== undefined) source.nonFinite = parsed.nonFinite;
  return source;
}

/** How long a named pipe may stay without a writer, or silent, before reading it is given up. */
export const DEFAULT_PIPE_TIMEOUT_MS = 10_000;

export async function readSource(file: string, options: { maxBytes?: number; pipeTimeoutMs?: number } = {}): Promise<ManifestSource> {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  let handle: FileHandle | undefined;
  let bytes: Uint8Array;
  try {
    // A named pipe opened for reading blocks until a writer opens it, and would hold the command
    // (and a libuv thread) forever: open it without blocking and wait for data with a deadline.
    if ((await stat(file)).isFIFO()) {
      handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK);
      bytes = await readPipe(handle, file, maxBytes + 1, options.pipeTimeoutMs ?? DEFAULT_PIPE_TIMEOUT_MS);
      if (bytes.length > maxBytes) return tooLarge(file, undefined, maxBytes);
      return parseSourceBytes(file, bytes, { maxBytes });
    }
    handle = await open(file, "r");
    const s = await handle.stat();
    if (s.isDirectory()) throw new SourceReadError(file, `${file} is a directory`);
    // Refuse before reading: a 10 GB file must not be pulled into memory to be told it is too big.
    if (s.isFile() && s.size > maxBytes) return tooLarge(file, s.size, maxBytes);
    // Devices, pipes and /proc files report a size of 0 (or a wrong one): read at most one byte
    // past the limit, whatever the size said, so /dev/zero is refused instead of read forever.
    bytes = await readAtMost(handle, maxBytes + 1, s.isFile() && s.size > 0 ? s.size + 1 : 0);
  } catch (e) {
    if (e instanceof SourceReadError) throw e;
    throw new SourceReadError(file, describeIoError(file, e));
  } finally {
    await handle?.close().catch(() => undefined);
  }
  if (bytes.length > maxBytes) return tooLarge(file, undefined, maxBytes);
  return parseSourceBytes(file, bytes, { maxBytes });
}

const CHUNK = 64 * 1024;
const PIPE_POLL_MS = 10;

/**
 * Reads a pipe opened with O_NONBLOCK: EAGAIN means a writer is there but quiet, and 0 bytes means
 * no writer (before any data arrived: none has opened it yet) or the end (after data).
 */
async function readPipe(handle: FileHandle, file: string, limit: number, timeoutMs: number): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  let total = 0;
  let quietSince = Date.now();
  const buffer = Buffer.allocUnsafe(CHUNK);
  while (total < limit) {
    let bytesRead = -1;
    try {
      ({ bytesRead } = await handle.read(buffer, 0, Math.min(CHUNK, limit - total), null));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EAGAIN") throw e;
    }
    if (bytesRead > 0) {
      chunks.push(Buffer.from(buffer.subarray(0, bytesRead)));
      total += bytesRead;
      quietSince = Date.now();
      continue;
    }
    if (bytesRead === 0 && total > 0) break;
    if (Date.now() - quietSince >= timeoutMs) {
      const why = total > 0 || bytesRead < 0 ? "its writer sent nothing" : "no program opened it for writing";
      throw new SourceReadError(file, `${file} is a named pipe and ${why} for ${timeoutMs / 1000} s: start the writer first (e.g. cat loop.yaml > ${file} &), or pass the manifest itself`);
    }
    await new Promise((r) => setTimeout(r, PIPE_POLL_MS));
  }
  return Buffer.concat(chunks);
}

/** Reads until end of file or `limit` bytes. A right `sizeHint` makes it one buffer and two reads. */
async function readAtMost(handle: FileHandle, limit: number, sizeHint: number): Promise<Uint8Array> {
  let buffer = Buffer.allocUnsafe(Math.min(limit, sizeHint > 0 ? sizeHint : CHUNK));
  let total = 0;
  while (total < limit) {
    if (total === buffer.length) {
      const grown = Buffer.allocUnsafe(Math.min(limit, buffer.length * 2));
      buffer.copy(grown, 0, 0, total);
      buffer = grown;
    }
    // Position null: read on from where the last read stopped, the only way a pipe can be read.
    const { bytesRead } = await handle.read(buffer, total, buffer.length - total, null);
    if (bytesRead === 0) break;
    total += bytesRead;
  }
  return buffer.subarray(0, total);
}

function describeIoError(file: string, e: unknown): string {
  const code = (e as NodeJS.ErrnoException)?.code;
  if (code === "ENOENT") return `${file}: no such file`;
  if (code === "EACCES" || code === "EPERM") return `${file}: permission denied`;
  if (code === "EISDIR") return `${file} is a directory`;
  return `${file}: cannot read (${code ?? (e as Error)?.message ?? "unknown error"})`;
}
