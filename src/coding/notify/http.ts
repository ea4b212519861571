/**
 * The one HTTP request every chat channel makes, and what its answer means for a retry: a 4xx
 * (but 408, 429) will fail the same way again, so it is not retried; a 5xx, a 429 or no answer
 * is. Error messages never carry the request's URL: Telegram's has the bot token in its path.
 */

/** A delivery that will fail the same way when tried again (a 4xx answer): not retried. */
export class PermanentDeliveryError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PermanentDeliveryError";
  }
}

export interface HttpRequest {
  url: URL;
  headers: Record<string, string>;
  body: string;
}

/** POSTs; resolves on a 2xx, else throws naming `service`, the status and the start of the answer. */
export async function post(service: string, request: HttpRequest, signal: AbortSignal): Promise<void> {
  let res: Response;
  try {
    res = await fetch(request.url, { method: "POST", headers: request.headers, body: request.body, signal, redirect: "error" });
  } catch (e) {
    if (signal.aborted) throw signal.reason instanceof Error ? signal.reason : new Error(String(signal.reason));
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    throw new Error(`${service} could not be reached: ${cause?.code ?? cause?.message ?? (e as Error).message}`);
  }
  const text = await res.text().catch(() => "");
  if (res.ok) return;
  const said = text.replace(/\s+/g, " ").trim().slice(0, 200);
  const message = `${service} answered HTTP ${res.status}${said ? `: ${said}` : ""}`;
  if (res.status >= 400 && res.status < 500 && res.status !== 408 && res.status !== 429) throw new PermanentDeliveryError(message);
  throw new Error(message);
}

/** An http(s) URL, or a one-line reason it is not one. */
export function httpUrl(text: string): URL | string {
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    return `is not a URL: ${JSON.stringify(text)}`;
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") return `must be an http:// or https:// URL, got ${JSON.stringify(text)}`;
  return u;
}
