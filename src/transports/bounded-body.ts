/**
 * Reads an HTTP response body with a bound on its size, so a broken or hostile server cannot
 * fill the process's memory (a 4 GB answer is refused after the first `max` bytes, or at once
 * when its Content-Length says so).
 */

export class ResponseTooLargeError extends Error {
  constructor(
    readonly limit: number,
    /** What the server declared in Content-Length, when it declared too much. */
    readonly declared?: number,
  ) {
    super(declared !== undefined ? `its answer declares ${declared} bytes, more than the ${limit} allowed` : `its answer is longer than the ${limit} bytes allowed`);
    this.name = "ResponseTooLargeError";
  }
}

/** The body as UTF-8 text; throws ResponseTooLargeError past `max` bytes, without reading further. */
export async function readBoundedText(response: Response, max: number): Promise<string> {
  const declared = Number(response.headers.get("content-length") ?? Number.NaN);
  if (Number.isFinite(declared) && declared > max) {
    await response.body?.cancel().catch(() => undefined);
    throw new ResponseTooLargeError(max, declared);
  }
  if (!response.body) return "";
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel().catch(() => undefined);
      throw new ResponseTooLargeError(max);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, size).toString("utf8");
}
