/**
 * Where signals live in JetStream. One stream per system (a set of hosts that signal each other),
 * one subject per target loop, one durable consumer per receiving loop:
 *
 *   stream    PULSE_<SYSTEM>                    subjects pulse.<system>.loop.>
 *   subject   pulse.<system>.loop.<loop_id>     (the loop id's dots are subject tokens)
 *   consumer  <loop_id with "." as "-">         filter_subject = the loop's subject
 *
 * Loop ids are `[a-z0-9_]` words joined by dots (the manifest schema), so the subject is exact
 * (no wildcard: loop a.b never sees a.b.c's signals) and the consumer name is injective.
 */
import { URL } from "node:url";

export const DEFAULT_SYSTEM = "pulse";
const SYSTEM = /^[a-z0-9_-]{1,48}$/;
const LOOP_ID = /^[a-z0-9_]+(\.[a-z0-9_]+)*$/;

export class NatsNameError extends Error {
  override readonly name = "NatsNameError";
}

export function checkSystem(system: string): string {
  if (!SYSTEM.test(system)) throw new NatsNameError(`a NATS system name is 1 to 48 characters of a-z, 0-9, _ and -, not ${JSON.stringify(system)}`);
  return system;
}

export function isLoopId(loopId: string): boolean {
  return LOOP_ID.test(loopId);
}

export function streamName(system: string): string {
  return `PULSE_${system.toUpperCase()}`;
}

export function streamSubjects(system: string): string {
  return `pulse.${system}.loop.>`;
}

export function loopSubject(system: string, loopId: string): string {
  if (!isLoopId(loopId)) throw new NatsNameError(`loop id ${JSON.stringify(loopId)} cannot be a NATS subject: loop ids are a-z, 0-9 and _ words joined by dots`);
  return `pulse.${system}.loop.${loopId}`;
}

export function consumerName(loopId: string): string {
  if (!isLoopId(loopId)) throw new NatsNameError(`loop id ${JSON.stringify(loopId)} cannot name a NATS consumer`);
  return loopId.replaceAll(".", "-");
}

export interface NatsAddress {
  /** Server URLs for the client (nats://host:port), credentials kept in them. */
  servers: string[];
  system: string;
  /** The URL as the user may see it: without a password or token. */
  display: string;
}

/**
 * Reads `nats://[user:pass@]host[:port][,host2:port2][?system=name]`. Commas give a cluster's
 * seed servers; `system` names the stream (default "pulse").
 */
export function parseNatsUrl(text: string): NatsAddress {
  const bad = (why: string) => new NatsNameError(`${JSON.stringify(redact(text))} is not a NATS address (${why}); use nats://host:4222 or nats://host:4222?system=name`);
  const m = /^(nats|tls):\/\/([^/?#]+)\/?(\?[^#]*)?$/.exec(text);
  if (!m) throw bad("it must start with nats:// or tls:// and name a host");
  const scheme = m[1] as string;
  const hosts = (m[2] as string).split(",");
  const params = new URLSearchParams((m[3] ?? "").slice(1));
  for (const key of params.keys()) if (key !== "system") throw bad(`unknown parameter ${key}: only system= is understood`);
  const servers = hosts.map((h) => {
    let url: URL;
    try {
      url = new URL(`${scheme}://${h}`);
    } catch {
      throw bad(`${redact(h)} is not host[:port]`);
    }
    if (!url.hostname) throw bad("no host");
    return `${scheme}://${h}`;
  });
  const system = params.get("system") ?? DEFAULT_SYSTEM;
  try {
    checkSystem(system);
  } catch (e) {
    throw bad((e as Error).message);
  }
  return { servers, system, display: redact(text) };
}

/** The address with any password or token replaced by "***". */
export function redact(text: string): string {
  return text.replace(/\/\/([^@/?#]*)@/, (_, auth: string) => `//${auth.includes(":") ? `${auth.slice(0, auth.indexOf(":"))}:***` : "***"}@`);
}
