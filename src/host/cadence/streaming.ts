/**
 * `streaming` (§8.3): an iteration per `batch_size` values of the stream named by `stream`. The
 * host binds stream URIs to async iterables (HostOptions.streams); the next batch is read only
 * after the previous iteration finished, so a fast stream is slowed to the loop's pace instead
 * of queueing without bound. A partial batch is flushed when the stream ends.
 */
import type { CadenceContext, CadenceDriver } from "./driver.js";

export class StreamingCadence implements CadenceDriver {
  readonly type = "streaming";
  private readonly uri: string;
  private readonly batchSize: number;
  private stopped = true;
  private iterator: AsyncIterator<unknown> | undefined;
  private ended = false;
  /** Resolves when the stream is consumed (or the cadence stopped). */
  done: Promise<void> = Promise.resolve();

  constructor(
    params: Record<string, unknown>,
    private readonly ctx: CadenceContext,
    private readonly source: AsyncIterable<unknown> | undefined,
  ) {
    this.uri = typeof params.stream === "string" ? params.stream : "";
    this.batchSize = typeof params.batch_size === "number" && params.batch_size >= 1 ? params.batch_size : 1;
  }

  start(): void {
    if (!this.source) {
      this.ctx.note(`stream ${this.uri} of ${this.ctx.loop.id} is not bound (HostOptions.streams): its streaming cadence stays idle`);
      return;
    }
    this.stopped = false;
    this.ended = false;
    this.iterator = this.source[Symbol.asyncIterator]();
    this.done = this.consume(this.iterator);
  }

  stop(): void {
    this.stopped = true;
    void this.iterator?.return?.();
  }

  waiting(): { for: string } | undefined {
    return this.stopped || this.ended || !this.source ? undefined : { for: `the next ${this.batchSize === 1 ? "value" : `${this.batchSize} values`} of stream ${this.uri}` };
  }

  private async consume(iterator: AsyncIterator<unknown>): Promise<void> {
    let batch: unknown[] = [];
    try {
      for (;;) {
        if (this.stopped) return;
        const next = await iterator.next();
        if (next.done) break;
        batch.push(next.value);
        if (batch.length >= this.batchSize) {
          await this.ctx.run({ workspace: this.ctx.workspace, input: { stream: this.uri, batch }, cause: { cadence: "streaming", stream: this.uri } }, "streaming");
          batch = [];
        }
      }
      if (batch.length > 0 && !this.stopped) await this.ctx.run({ workspace: this.ctx.workspace, input: { stream: this.uri, batch }, cause: { cadence: "streaming", stream: this.uri } }, "streaming");
    } catch (error) {
      this.ctx.note(`stream ${this.uri} of ${this.ctx.loop.id} failed: ${(error as Error)?.message ?? String(error)}`);
    } finally {
      this.ended = true;
    }
  }
}
