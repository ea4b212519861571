/**
 * A SubstrateSet whose every call is a POST to a substrate service (docs/substrates-http.md).
 * Errors are sorted for the runtime's circuit breaker: a 4xx answer is the substrate refusing
 * the call (SubstrateRequestError); no answer, a timeout, a 5xx or an answer over
 * `maxResponseBytes` is the substrate being unavailable (SubstrateUnavailableError). Redirects
 * are never followed: a 3xx is an error naming where it pointed (REDIRECTED), since following it
 * would send the arguments, workspace and trace to another origin, and a 302 would turn a write
 * into a GET whose 200 looks like success.
 *
 * Connections are reused: the global fetch (undici) keeps them alive, and nothing here creates
 * an agent per call.
 */
import { SUBSTRATE_OPERATIONS, SubstrateRequestError, SubstrateUnavailableError } from "../../src/substrates/contracts.js";
import type { CallContext, SubstrateSet, SubstrateSlotName } from "../../src/substrates/contracts.js";
import type { Slot, SlotImplementation, SubstrateFactory } from "../../src/substrates/registry.js";
import { readBoundedText, ResponseTooLargeError } from "../../src/transports/bounded-body.js";
import { API_PREFIX, traceparentFor, VOID_OPERATIONS } from "./protocol.js";
import type { WireContext } from "./protocol.js";

export interface HttpSubstrateOptions {
  /** Per call, covering connect, request and response body. Default 5000. */
  timeoutMs?: number;
  /** A fetch implementation (tests, custom dispatchers); defaults to the global fetch. */
  fetch?: typeof fetch;
  /** Extra headers on every request (authorization for the service, for example). */
  headers?: Record<string, string>;
  /** Largest answer read (default 16 MiB); a longer one fails the call, unread past the limit. */
  maxResponseBytes?: number;
}

export const DEFAULT_TIMEOUT_MS = 5000;
export const DEFAULT_MAX_RESPONSE_BYTES = 16 * 1024 * 1024;

/** All five slots served by the service at `baseUrl` (a `{ws_id}` in it becomes the call's workspace). */
export function httpSubstrates(baseUrl: string, options: HttpSubstrateOptions = {}): Required<SubstrateSet> {
  return {
    memory: httpSubstrate("memory", baseUrl, options),
    policy: httpSubstrate("policy", baseUrl, options),
    audit: httpSubstrate("audit", baseUrl, options),
    auth: httpSubstrate("auth", baseUrl, options),
    time: httpSubstrate("time", baseUrl, options),
  };
}

/** A factory for SubstrateRegistry schemes `http` and `https`: the substrate URI is the base URL. */
export function httpSubstrateFactory(options: HttpSubstrateOptions = {}): SubstrateFactory {
  return (slot, uri) => httpSubstrate(slot, uri, options);
}

/** One slot's client. */
export function httpSubstrate<S extends Slot>(slot: S, baseUrl: string, options: HttpSubstrateOptions = {}): SlotImplementation[S] {
  const call = caller(slot, baseUrl, options);
  const client: Record<string, (args: unknown, ctx: CallContext) => Promise<unknown>> = {};
  for (const operation of SUBSTRATE_OPERATIONS[slot] as readonly string[]) {
    client[operation] = (args, ctx) => call(operation, args, ctx);
  }
  return client as unknown as SlotImplementation[S];
}

function caller(slot: SubstrateSlotName, baseUrl: string, options: HttpSubstrateOptions) {
  let parsed: URL;
  try {
    parsed = new URL(baseUrl.replaceAll("{ws_id}", "ws"));
  } catch {
    throw new TypeError(`the ${slot} substrate URL ${JSON.stringify(baseUrl)} is not a valid URL`);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") throw new TypeError(`the ${slot} substrate URL ${JSON.stringify(baseUrl)} is not http or https`);
  const base = baseUrl.replace(/\/+$/, "");
  const perWorkspace = base.includes("{ws_id}");
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const fetchImpl = options.fetch ?? fetch;
  const extraHeaders = options.headers ?? {};
  const maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;

  return async (operation: string, args: unknown, ctx: CallContext): Promise<unknown> => {
    const root = perWorkspace ? base.replaceAll("{ws_id}", encodeURIComponent(ctx.workspace_id)) : base;
    const url = `${root}${API_PREFIX}/${slot}/${operation}`;
    const context: WireContext = { trace_id: ctx.trace_id, workspace_id: ctx.workspace_id };
    if (ctx.tx_id !== undefined) context.tx_id = ctx.tx_id;
    let body: string;
    try {
      body = JSON.stringify({ args, context });
    } catch (error) {
      throw new SubstrateRequestError(slot, "BAD_REQUEST", `${operation}: the arguments cannot be sent as JSON (${(error as Error).message})`);
    }
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = ctx.signal ? AbortSignal.any([ctx.signal, timeout]) : timeout;

    let status: number;
    let text: string;
    try {
      const response = await fetchImpl(url, {
        method: "POST",
        headers: { ...extraHeaders, "content-type": "application/json", accept: "application/json", traceparent: traceparentFor(context.trace_id) },
        body,
        signal,
        redirect: "manual",
      });
      status = response.status;
      if (status >= 300 && status < 400) {
        await response.body?.cancel().catch(() => undefined);
        throw redirected(slot, operation, url, status, response.headers.get("location"));
      }
      text = await readBoundedText(response, maxResponseBytes);
    } catch (error) {
      if (error instanceof SubstrateRequestError) throw error;
      if (error instanceof ResponseTooLargeError) throw new SubstrateUnavailableError(slot, `${operation}: ${url}: ${error.message} (maxResponseBytes; not read further)`);
      // The caller's own cancellation is not the substrate's fault: hand back the caller's reason.
      if (ctx.signal?.aborted) throw ctx.signal.reason;
      if (timeout.aborted) throw new SubstrateUnavailableError(slot, `${operation}: no answer from ${url} within ${timeoutMs} ms`);
      throw new SubstrateUnavailableError(slot, `${operation}: cannot reach ${url} (${describeNetworkError(error)})`);
    }
    return interpret(slot, operation, url, status, text);
  };
}

function interpret(slot: SubstrateSlotName, operation: string, url: string, status: number, text: string): unknown {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const error = (body as { error?: { code?: unknown; message?: unknown } } | undefined)?.error;
  if (status >= 500) {
    const detail = typeof error?.message === "string" ? error.message : `HTTP ${status}`;
    throw new SubstrateUnavailableError(slot, `${operation}: ${url} answered ${status} (${detail})`);
  }
  if (status >= 400) {
    const code = typeof error?.code === "string" ? error.code : `HTTP_${status}`;
    const message = typeof error?.message === "string" ? error.message : `${url} answered ${status}: ${text.slice(0, 200)}`;
    throw new SubstrateRequestError(slot, code, message);
  }
  if (status !== 200 || typeof body !== "object" || body === null || !("result" in body)) {
    // A server that answers outside the protocol is broken, which for the caller is unavailable.
    throw new SubstrateUnavailableError(slot, `${operation}: ${url} answered ${status} without a {"result": …} body`);
  }
  const result = (body as { result: unknown }).result;
  return VOID_OPERATIONS.has(operation) && result === null ? undefined : result;
}

function redirected(slot: SubstrateSlotName, operation: string, url: string, status: number, location: string | null): SubstrateRequestError {
  let target = location;
  try {
    if (location) target = new URL(location, url).href;
  } catch {
    // Not a URL: named as it came.
  }
  const where = target ? `to ${JSON.stringify(target)}` : "without a Location";
  return new SubstrateRequestError(slot, "REDIRECTED", `${operation}: ${url} answered ${status}, redirecting ${where}; substrate calls are not redirected (they carry arguments, workspace and trace): point the substrate URI at the service itself`);
}

function describeNetworkError(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | undefined)?.cause;
  if (typeof cause?.code === "string") return cause.code;
  if (typeof cause?.message === "string") return cause.message;
  return error instanceof Error ? error.message : String(error);
}
