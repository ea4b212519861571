/**
 * At-least-once signals over CloudEvents HTTP between two processes, each on its own SQLite store:
 * the receiving host answers only once the iteration the signal started has committed (with its
 * inbox record), so the sender settles its outbox row only then. A receiver SIGKILLed between
 * taking the signal and committing never answered: the sender keeps the row and sends the signal
 * again to the restarted receiver, which processes it exactly once.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { SqliteStore } from "../../adapters/sqlite/store.js";
import { initSignatures } from "../../src/runtime/signature.js";
import { ROOT } from "../cli/run-bin.js";
import { tempDir } from "./stores.js";

const CHILD = resolve(import.meta.dirname, "fixtures/http-pair.mjs");
const children: ChildProcess[] = [];
const dirs: string[] = [];

beforeAll(async () => {
  if (!existsSync(join(ROOT, "dist/src/embedded.js"))) throw new Error("dist/ is missing: run `npm run build` first (npm test does)");
  await initSignatures();
});

afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

interface Child {
  lines: string[];
  exited: Promise<number | null>;
  proc: ChildProcess;
  out: () => string;
}

function start(...args: string[]): Child {
  const proc = spawn(process.execPath, [CHILD, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  children.push(proc);
  const lines: string[] = [];
  let err = "";
  createInterface({ input: proc.stdout as NodeJS.ReadableStream }).on("line", (l) => lines.push(l));
  proc.stderr?.on("data", (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((r) => proc.on("exit", (code) => r(code)));
  return { lines, exited, proc, out: () => `${lines.join("\n")}\n${err}` };
}

async function until(what: string, ok: () => boolean | Promise<boolean>, timeoutMs = 20_000, child?: Child): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}${child ? `:\n${child.out()}` : ""}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const s = createServer();
    s.once("error", fail);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => done(port));
    });
  });
}

/** Rows of a store file another process writes (opened read-write for a moment: WAL readers see its commits). */
async function rows(path: string, sql: string): Promise<Record<string, unknown>[]> {
  const store = new SqliteStore(path);
  try {
    const db = (store as unknown as { db: { prepare(sql: string): { all(): unknown[] } } }).db;
    return db.prepare(sql).all() as Record<string, unknown>[];
  } finally {
    await store.close();
  }
}

async function effects(path: string): Promise<string[]> {
  const store = new SqliteStore(path);
  try {
    const nodes = (await store.memory("memory://r.b").retrieve_context({ query: { type: "effect:r.b" }, k: 100 }, { trace_id: "0".repeat(31) + "1", workspace_id: "default" })).nodes;
    return nodes.map((n) => String(n.content));
  } finally {
    await store.close();
  }
}

const outboxOf = (path: string) => rows(path, "SELECT event_id, status FROM outbox");

/** Exactly once at the receiver: one inbox record, one completed iteration, one side effect, for the signal sent. */
async function processedOnce(receiverDb: string, eventId: unknown): Promise<void> {
  const inbox = await rows(receiverDb, "SELECT event_id, trace_id FROM inbox WHERE loop_id = 'r.b'");
  expect(inbox.map((r) => r.event_id)).toEqual([eventId]);
  const iterations = await rows(receiverDb, "SELECT trace_id, status FROM iterations WHERE loop_id = 'r.b'");
  expect(iterations).toEqual([{ trace_id: inbox[0]?.trace_id, status: "completed" }]);
  expect(await effects(receiverDb)).toEqual([inbox[0]?.trace_id]);
}

async function pair() {
  const dir = tempDir();
  dirs.push(dir);
  const port = await freePort();
  return { sender: join(dir, "sender.db"), receiver: join(dir, "receiver.db"), port, url: `http://127.0.0.1:${port}` };
}

describe("signals over HTTP are answered once the receiver committed", () => {
  it("a normal delivery settles the sender's outbox promptly, after the receiver committed (the near-miss)", async () => {
    const p = await pair();
    const receiver = start("receive", p.receiver, String(p.port));
    await until("the receiver", () => receiver.lines.includes("ready"), 20_000, receiver);
    const sender = start("send", p.sender, p.url, "1");
    await until("the sender to settle", () => sender.lines.includes("settled"), 20_000, sender);
    expect(await sender.exited, sender.out()).toBe(0);
    const [row] = await outboxOf(p.sender);
    expect(row?.status).toBe("delivered");
    await processedOnce(p.receiver, row?.event_id);
    receiver.proc.kill("SIGTERM");
    expect(await receiver.exited, receiver.out()).toBe(0);
  }, 60_000);

  for (const phase of ["fetch", "apply"]) {
    it(`a receiver SIGKILLed in its ${phase} phase, before its iteration committed: the sender keeps the signal, and after a restart it is processed exactly once, then settled`, async () => {
      const p = await pair();
      const first = start("receive", p.receiver, String(p.port), `block-at-${phase}`);
      await until("the receiver", () => first.lines.includes("ready"), 20_000, first);
      const sender = start("send", p.sender, p.url, "1");
      await until("the receiver to take the signal", () => first.lines.some((l) => l.startsWith("took ")), 20_000, first);
      // Taken, not committed: the sender has no answer and its outbox row stays pending.
      await new Promise((r) => setTimeout(r, 300));
      const [pending] = await outboxOf(p.sender);
      expect(pending?.status).toBe("pending");
      expect(sender.lines).not.toContain("settled");
      first.proc.kill("SIGKILL");
      await first.exited;
      expect(await outboxOf(p.sender)).toEqual([pending]);
      // The restarted receiver (resuming the interrupted iteration if it had begun one) gets it again.
      const second = start("receive", p.receiver, String(p.port));
      await until("the sender to settle", () => sender.lines.includes("settled"), 30_000, sender);
      expect(await sender.exited, sender.out()).toBe(0);
      expect(await outboxOf(p.sender)).toEqual([{ event_id: pending?.event_id, status: "delivered" }]);
      // Settled only after the receiver committed: its inbox and its side effect are there already.
      const inbox = await rows(p.receiver, "SELECT event_id FROM inbox WHERE loop_id = 'r.b'");
      expect(inbox.map((r) => r.event_id)).toEqual([pending?.event_id]);
      await until("the receiver's iteration to complete", async () => (await rows(p.receiver, "SELECT status FROM iterations WHERE loop_id = 'r.b'")).every((r) => r.status === "completed"), 20_000, second);
      second.proc.kill("SIGTERM");
      expect(await second.exited, second.out()).toBe(0);
      await processedOnce(p.receiver, pending?.event_id);
    }, 90_000);
  }
});
