/** The Store adapters the contract suite runs against, each opened fresh (SQLite in a temp file). */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MemoryStore } from "../../adapters/memory/store.js";
import { SqliteStore } from "../../adapters/sqlite/store.js";
import type { Store } from "../../src/store/contracts.js";
import { postgresFixtures } from "../adapters/postgres/store-fixture.js";
import type { AuditEvent } from "../../src/substrates/contracts.js";

export interface StoreFixture {
  name: string;
  open(): Store;
  /** Opens the same store again (a restart); the memory store has nothing to reopen. */
  reopen?(store: Store): Promise<Store>;
  cleanup(): void;
}

export function tempDir(): string {
  return mkdtempSync(join(tmpdir(), "pulse-store-"));
}

export const fixtures: (() => StoreFixture)[] = [
  () => ({ name: "memory", open: () => new MemoryStore(), cleanup: () => undefined }),
  () => {
    const dir = tempDir();
    const path = join(dir, "pulse.db");
    return {
      name: "sqlite",
      open: () => new SqliteStore(path),
      reopen: async (store) => {
        await store.close();
        return new SqliteStore(path);
      },
      cleanup: () => rmSync(dir, { recursive: true, force: true }),
    };
  },
  ...postgresFixtures,
];

export const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
export const TRACE2 = "5bf92f3577b34da6a3ce929d0e0e4737";

export function event(seq: number, overrides: Partial<AuditEvent> = {}): AuditEvent {
  return { event_id: `${TRACE}-${seq}`, event_type: "phase.completed", trace_id: TRACE, loop_id: "examples.hello", phase_id: "decide", workspace_id: "ws_a", timestamp: "2026-11-24T12:00:00.000Z", signature: "blake3:ab", seq, data: { n: seq }, ...overrides };
}

/** Runs a kill test's child (node script args…); kills it `killAfterMs` after its first line unless it ends first. */
export function runChild(script: string, args: string[], killAfterMs?: number): Promise<{ killed: boolean; code: number | null; out: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [script, ...args], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (out += d.toString()));
    let killed = false;
    // Counted from the child's first line, so the kill lands while it works, not while node starts.
    if (killAfterMs !== undefined) child.stdout.once("data", () => setTimeout(() => (killed = child.kill("SIGKILL")), killAfterMs));
    child.on("exit", (code) => done({ killed, code, out }));
  });
}
