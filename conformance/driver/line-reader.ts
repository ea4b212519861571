/**
 * Splits an adapter's output stream into lines without ever holding more than one bounded line.
 * readline keeps an unterminated line in memory however long it grows, so an adapter that
 * writes hundreds of megabytes without a newline ends in a RangeError; here a line longer than
 * the bound is either a protocol failure (stdout: every message is one line) or cut short
 * (stderr: free logging, kept only as evidence).
 */
import type { Readable } from "node:stream";

const LF = 0x0a;

export interface LineReaderOptions {
  /** The longest line, in bytes, without its newline. */
  maxLineBytes: number;
  /**
   * "fail": call onOverflow once and close the stream (a writer that goes on gets EPIPE);
   * "truncate": keep the line's start and drop the rest of it.
   */
  overflow: "fail" | "truncate";
  onLine(line: string): void;
  onOverflow?(bytes: number): void;
}

export function readLines(stream: Readable, o: LineReaderOptions): void {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  /** Bytes of the current line dropped past the bound (truncate mode). */
  let dropped = 0;
  let failed = false;

  const emit = () => {
    const line = Buffer.concat(pending).toString("utf8");
    const total = pendingBytes + dropped;
    pending = [];
    pendingBytes = 0;
    dropped = 0;
    o.onLine(total > o.maxLineBytes ? `${line}… (line cut: ${total} bytes, the first ${o.maxLineBytes} kept)` : line);
  };

  /** Adds bytes of the current line, honouring the bound; false once the stream has failed. */
  const keep = (bytes: Buffer): boolean => {
    const room = o.maxLineBytes - pendingBytes;
    if (bytes.length <= room) {
      if (bytes.length > 0) pending.push(bytes);
      pendingBytes += bytes.length;
      return true;
    }
    if (o.overflow === "fail") {
      failed = true;
      pending = [];
      o.onOverflow?.(pendingBytes + bytes.length);
      stream.destroy();
      return false;
    }
    if (room > 0) pending.push(bytes.subarray(0, room));
    pendingBytes += Math.max(room, 0);
    dropped += bytes.length - Math.max(room, 0);
    return true;
  };

  stream.on("data", (chunk: Buffer) => {
    if (failed) return;
    let start = 0;
    for (let nl = chunk.indexOf(LF, start); nl !== -1; nl = chunk.indexOf(LF, start)) {
      if (!keep(chunk.subarray(start, nl))) return;
      emit();
      start = nl + 1;
    }
    keep(chunk.subarray(start));
  });
  stream.on("end", () => {
    if (!failed && (pendingBytes > 0 || dropped > 0)) emit();
  });
}
