/**
 * Sending the `replan_to_session` SurpriseSignal (`pulse guidance serve --signal-to URL --session
 * ID`): each plan-invalidating change the watcher records is POSTed to the session's signal
 * endpoint on `pulse serve`, one at a time in the order recorded (a later change never overtakes
 * an earlier one). A failed delivery is retried with exponential backoff; every retry carries the
 * same CloudEvents id, so the receiver steers once however often it arrives. A refusal the sender
 * cannot fix by waiting (a 4xx other than 408/429) is not retried.
 */
import { isLoopback } from "../../transports/loopback.js";
import type { PulseCloudEvent } from "../../tokens/types.js";
import { readText, WATCHED_FILES, type WatchedFile } from "./files.js";
import type { GuidanceEvent } from "./events.js";
import { isPlanInvalidating } from "./policy.js";
import type { Tracked } from "./handlers.js";
import { surpriseEnvelope, type ChangedFile } from "./surprise.js";

export const SIGNAL_TOKEN_ENV = "PULSE_SIGNAL_TOKEN";

export interface SignalTarget {
  /** The loop's signal endpoint: `<base>/api/pulse/<session>/signal` or `<base>/api/workflows/<workflow>/signal`. */
  endpoint: string;
  kind: "session" | "workflow";
  /** The session's or workflow's id (the envelope's workspace). */
  id: string;
  token?: string;
}

/**
 * `--signal-to URL --session ID` (or `--workflow ID`; a bare string is a session): checked before
 * anything is watched. A token is required off loopback.
 */
export function signalTarget(base: string, to: string | { session?: string | undefined; workflow?: string | undefined } | undefined, token: string | undefined): SignalTarget {
  const { session, workflow } = typeof to === "string" || to === undefined ? { session: to, workflow: undefined } : to;
  let url: URL;
  try {
    url = new URL(base);
  } catch {
    throw new TypeError(`--signal-to ${JSON.stringify(base)} is not a URL; give the address of pulse serve, e.g. http://127.0.0.1:3002`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new TypeError(`--signal-to ${base}: use an http:// or https:// URL`);
  const given = (v: string | undefined) => v !== undefined && v.trim() !== "";
  if (given(session) && given(workflow)) throw new TypeError("--session and --workflow: give one, the loop the signal steers");
  if (!given(session) && !given(workflow)) throw new TypeError("--signal-to needs --session ID or --workflow ID: the session or workflow (of pulse serve) the signal steers");
  if (!isLoopback(url.hostname) && token === undefined) throw new TypeError(`--signal-to ${base} is not on this machine: set ${SIGNAL_TOKEN_ENV} to the bearer token pulse serve there requires`);
  const [kind, id] = given(session) ? (["session", session!] as const) : (["workflow", workflow!] as const);
  const endpoint = `${url.origin}${url.pathname.replace(/\/+$/, "")}/api/${kind === "session" ? "pulse" : "workflows"}/${encodeURIComponent(id)}/signal`;
  return { endpoint, kind, id, ...(token !== undefined ? { token } : {}) };
}

export interface Delivery {
  status: number;
  attempts: number;
  body: unknown;
}

export interface SendOptions {
  attempts?: number;
  baseDelayMs?: number;
  maxDelayMs?: number;
  timeoutMs?: number;
  onRetry?: (attempt: number, reason: string, delayMs: number) => void;
}

const retriable = (status: number) => status >= 500 || status === 408 || status === 429;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class SignalRefusedError extends Error {}

export async function sendSignal(target: SignalTarget, envelope: PulseCloudEvent, opts: SendOptions = {}): Promise<Delivery> {
  const attempts = opts.attempts ?? 6;
  const body = JSON.stringify(envelope);
  const headers: Record<string, string> = { "content-type": "application/cloudevents+json; charset=utf-8" };
  if (target.token !== undefined) headers.authorization = `Bearer ${target.token}`;
  for (let attempt = 1; ; attempt++) {
    let reason: string;
    try {
      const res = await fetch(target.endpoint, { method: "POST", headers, body, signal: AbortSignal.timeout(opts.timeoutMs ?? 10_000) });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        // Not ours (a proxy's page): kept as text for the message.
      }
      if (res.ok) return { status: res.status, attempts: attempt, body: parsed };
      const message = (parsed as { error?: { message?: string } })?.error?.message ?? text.slice(0, 200);
      if (!retriable(res.status)) throw new SignalRefusedError(`${target.endpoint} refused the signal (${res.status}): ${message}`);
      reason = `${res.status}: ${message}`;
    } catch (e) {
      if (e instanceof SignalRefusedError) throw e;
      reason = (e as Error).message;
    }
    if (attempt >= attempts) throw new Error(`${target.endpoint}: the signal was not delivered after ${attempt} attempts (last: ${reason})`);
    const delay = Math.min(opts.maxDelayMs ?? 8_000, (opts.baseDelayMs ?? 250) * 2 ** (attempt - 1));
    opts.onRetry?.(attempt, reason, delay);
    await sleep(delay);
  }
}

/** The hash a file had before `event` (what the plan was made against), from the ledger. */
function previousHash(ledger: readonly GuidanceEvent[], event: GuidanceEvent): string | null {
  const i = ledger.findIndex((e) => e.id === event.id);
  const before = (i < 0 ? ledger : ledger.slice(0, i)).findLast((e) => e.path === event.path);
  return before?.sha256 ?? null;
}

/** The envelope for a scan that left a replan pending with a change of its own; undefined for any other scan. */
export function surpriseOfScan(scan: Tracked, ledger: readonly GuidanceEvent[], root: string, dir: string, session: string): PulseCloudEvent | undefined {
  const pending = scan.interrupt.needs_replan ? scan.events.find((e) => e.id === scan.interrupt.pending_replan_event_id) : undefined;
  if (!pending) return undefined;
  const files: ChangedFile[] = scan.events.filter(isPlanInvalidating).map((e) => {
    const name = e.path.replace(/^\.pulse\//, "") as WatchedFile;
    return { path: e.path, kind: e.kind, sha256: e.sha256, previous_sha256: previousHash(ledger, e), text: e.kind === "deleted" || !WATCHED_FILES.includes(name) ? null : readText(`${dir}/${name}`) };
  });
  return surpriseEnvelope({ event: pending, files, session, root });
}

/** Sends one at a time, in order; a delivery that fails for good is reported and the next one still goes. */
export function signalQueue(target: SignalTarget, report: (line: string) => void, opts: SendOptions = {}) {
  let tail: Promise<unknown> = Promise.resolve();
  return {
    push(envelope: PulseCloudEvent): void {
      tail = tail
        .then(() => sendSignal(target, envelope, { ...opts, onRetry: (n, reason, ms) => report(`signal ${envelope.id}: attempt ${n} failed (${reason}); again in ${ms} ms\n`) }))
        .then(
          (d) => report(`signal ${envelope.id} → ${target.kind} ${target.id}: ${(d.body as { duplicate?: boolean })?.duplicate ? "already steered (redelivery)" : "steered"}${d.attempts > 1 ? ` after ${d.attempts} attempts` : ""}\n`),
          (e: Error) => report(`signal ${envelope.id}: ${e.message}\n`),
        );
    },
    /** Resolves when everything pushed so far has been delivered or given up. */
    settled(): Promise<void> {
      return tail.then(() => undefined);
    },
  };
}
