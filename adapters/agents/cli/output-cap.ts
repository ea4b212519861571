/**
 * Keeps the head and the tail of a stream that may be huge: an agent that prints for an hour
 * must not fill the memory, yet the start (what it was asked, how it began) and the end (why it
 * stopped) are what a person reads.
 */
export class HeadTailBuffer {
  private readonly head: Buffer[] = [];
  private headBytes = 0;
  private tail: Buffer[] = [];
  private tailBytes = 0;
  /** Bytes seen in all, kept or not. */
  total = 0;

  constructor(private readonly maxBytes: number) {}

  push(chunk: Buffer): void {
    this.total += chunk.length;
    const headRoom = (this.maxBytes >> 1) - this.headBytes;
    if (headRoom > 0) {
      const part = chunk.subarray(0, headRoom);
      this.head.push(part);
      this.headBytes += part.length;
      chunk = chunk.subarray(part.length);
      if (chunk.length === 0) return;
    }
    this.tail.push(chunk);
    this.tailBytes += chunk.length;
    const tailMax = this.maxBytes - (this.maxBytes >> 1);
    // Drop whole chunks from the front while the rest still fills the tail, then trim one.
    while (this.tailBytes - (this.tail[0]?.length ?? 0) >= tailMax && this.tail.length > 1) this.tailBytes -= this.tail.shift()!.length;
    if (this.tailBytes > tailMax) {
      const first = this.tail[0]!;
      this.tail[0] = first.subarray(this.tailBytes - tailMax);
      this.tailBytes = tailMax;
    }
  }

  get truncated(): number {
    return this.total - this.headBytes - this.tailBytes;
  }

  toString(): string {
    const head = Buffer.concat(this.head).toString("utf8");
    const tail = Buffer.concat(this.tail).toString("utf8");
    if (this.truncated === 0) return head + tail;
    return `${head}\n[… ${this.truncated} bytes omitted …]\n${tail}`;
  }
}

/**
 * Splits a byte stream into lines as it arrives. A line longer than `maxLine` is cut (the rest
 * of it dropped) so one runaway line cannot fill the memory either.
 */
export class LineSplitter {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private overflow = false;

  constructor(
    private readonly onLine: (line: string) => void,
    private readonly maxLine = 8 << 20,
  ) {}

  push(chunk: Buffer): void {
    let start = 0;
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, start)) {
      this.append(chunk.subarray(start, i));
      this.emit();
      start = i + 1;
    }
    if (start < chunk.length) this.append(chunk.subarray(start));
  }

  end(): void {
    if (this.pendingBytes > 0) this.emit();
  }

  private append(part: Buffer): void {
    if (this.overflow) return;
    const room = this.maxLine - this.pendingBytes;
    if (part.length > room) {
      part = part.subarray(0, room);
      this.overflow = true;
    }
    this.pending.push(part);
    this.pendingBytes += part.length;
  }

  private emit(): void {
    const line = Buffer.concat(this.pending).toString("utf8").replace(/\r$/, "");
    this.pending = [];
    this.pendingBytes = 0;
    this.overflow = false;
    this.onLine(line);
  }
}
