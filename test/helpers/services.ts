/**
 * The servers some suites need: NATS with JetStream (NATS_URL) and PostgreSQL (DATABASE_URL).
 * Unset, the usual local addresses are tried (127.0.0.1:4222; 127.0.0.1:5432 database test),
 * which `.ci/run` also finds or starts. A suite whose server is missing is skipped with the
 * reason, except under CI=true, where it fails: CI must never pass without running it.
 *
 * These servers are shared (other test runs, other people): every test names what it creates
 * (streams, schemas, roles) with a run id and drops it afterwards.
 */
import { randomBytes } from "node:crypto";
import { connect as tcpConnect } from "node:net";
import { describe, it } from "vitest";

export interface Service {
  /** Where it runs, when it does. */
  url?: string;
  /** Why it is not available. */
  missing?: string;
}

/** A lowercase id unique to this run, for names on shared servers. */
export function runId(prefix = "t"): string {
  return `${prefix}${Date.now().toString(36)}${randomBytes(3).toString("hex")}`;
}

/** The first line a server sends on connect (NATS's INFO), or undefined. */
function greeting(host: string, port: number, timeoutMs = 1_500): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = tcpConnect({ host, port });
    let text = "";
    const done = (value: string | undefined) => {
      socket.destroy();
      resolve(value);
    };
    socket.setTimeout(timeoutMs, () => done(undefined));
    socket.on("error", () => done(undefined));
    socket.on("connect", () => text === "" && socket.setTimeout(timeoutMs));
    socket.on("data", (chunk) => {
      text += chunk.toString("utf8");
      if (text.includes("\n")) done(text.slice(0, text.indexOf("\n")));
    });
  });
}

function reachable(host: string, port: number, timeoutMs = 1_500): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = tcpConnect({ host, port });
    socket.setTimeout(timeoutMs, () => (socket.destroy(), resolve(false)));
    socket.on("error", () => resolve(false));
    socket.on("connect", () => (socket.destroy(), resolve(true)));
  });
}

let nats: Promise<Service> | undefined;
let postgres: Promise<Service> | undefined;

export function natsService(): Promise<Service> {
  nats ??= (async () => {
    const url = process.env.NATS_URL || "nats://127.0.0.1:4222";
    const m = /^nats:\/\/(?:[^@/]*@)?([^:/?,]+):?(\d+)?/.exec(url);
    if (!m) return { missing: `NATS_URL=${url} is not nats://host:port` };
    const info = await greeting(m[1] as string, Number(m[2] ?? 4222));
    if (info === undefined) return { missing: `no NATS server at ${url} (set NATS_URL, or run .ci/run, which starts one)` };
    if (!/"jetstream"\s*:\s*true/.test(info)) return { missing: `the NATS server at ${url} runs without JetStream (nats-server -js)` };
    return { url };
  })();
  return nats;
}

export function postgresService(): Promise<Service> {
  postgres ??= (async () => {
    const url = process.env.DATABASE_URL || "postgresql://postgres@127.0.0.1:5432/test";
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return { missing: `DATABASE_URL=${url} is not a postgresql:// URL` };
    }
    if (!(await reachable(parsed.hostname, Number(parsed.port || 5432)))) return { missing: `no PostgreSQL server at ${parsed.host} (set DATABASE_URL, or run .ci/run, which starts one)` };
    return { url };
  })();
  return postgres;
}

/**
 * `describe` for a suite that needs `service`: run when it is there; skipped with the reason
 * otherwise, except under CI=true, where the missing service is a failing test.
 */
export function describeWith(service: Service, name: string, suite: (url: string) => void): void {
  if (service.url) {
    describe(name, () => suite(service.url as string));
    return;
  }
  if (process.env.CI === "true") {
    describe(name, () => {
      it(`needs its server: ${service.missing}`, () => {
        throw new Error(`${service.missing} (CI=true: a suite that needs a server fails without it)`);
      });
    });
    return;
  }
  describe.skip(`${name} (skipped: ${service.missing})`, () => suite(""));
}
