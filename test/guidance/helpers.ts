/** Shared by the guidance tests: a project with an initialised .pulse/, and waiting for the ledger. */
import { mkdtempSync, readFileSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { GuidanceSidecar } from "../../src/coding/guidance/sidecar.js";
import { parseEvents, type GuidanceEvent } from "../../src/coding/guidance/events.js";

export async function project(): Promise<{ root: string; sidecar: GuidanceSidecar; file: (name: string) => string }> {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "pulse-guidance-")));
  const sidecar = await GuidanceSidecar.open({ root });
  sidecar.init();
  return { root, sidecar, file: (name) => join(root, ".pulse", name) };
}

export function ledger(root: string): { events: GuidanceEvent[]; skipped: number } {
  return parseEvents(readFileSync(join(root, ".pulse", "events.jsonl"), "utf8"));
}

/** Waits until the ledger holds `count` events (a watcher records asynchronously). */
export async function untilEvents(root: string, count: number, timeoutMs = 10_000): Promise<GuidanceEvent[]> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const { events } = ledger(root);
    if (events.length >= count) return events;
    if (Date.now() > end) throw new Error(`the ledger holds ${events.length} events, not ${count}, after ${timeoutMs} ms: ${JSON.stringify(events)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
