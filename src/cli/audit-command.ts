/**
 * `pulse audit`: the audit trail a store keeps, readable and filterable, a page at a time; `pulse
 * audit verify`: walks each workspace's hash chain and names the first broken link.
 */
import type { Command } from "commander";
import { StoreError, type AuditFilter, type Store, type StoredAuditEvent } from "../store/contracts.js";
import { EXIT } from "./exit-codes.js";
import { parseCount } from "./inputs.js";
import type { CliIO } from "./io.js";
import { resolveTrace } from "./trace-prefix.js";
import { openStoreForCli, storeSpec } from "./store-open.js";

export interface AuditCliOptions {
  store?: string;
  loop?: string;
  trace?: string;
  workspace?: string;
  json?: boolean;
  limit?: string;
  after?: string;
}

export const AUDIT_HELP = `
Lists the store's audit events, oldest first, one line each: position, time, workspace, loop,
trace, the event's seq in its iteration, its type and phase, and what it recorded. A page holds
--limit events (default 50); the last line says how to ask for the next one (--after). --json
prints each event as one JSON line with its chain position and hashes.

pulse audit verify checks every workspace's hash chain (each event carries the BLAKE3 hash of the
one before), that each iteration's events are numbered 0, 1, 2, … without a gap, and that every
step the iteration journal committed (a start, each phase, an end) has its events: "ok" with
counts, or the first broken link or trace of each workspace and exit 1.

Exit codes: 0 listed (or verified); 1 a broken chain, or a store that cannot be read; 2 usage error.`;

export function addStoreOption(cmd: Command): Command {
  return cmd.option("--store <spec>", "the store: sqlite:PATH (or a plain file path), postgres://… or memory: (default: $PULSE_STORE, else sqlite:.pulse/pulse.db)");
}

export function addAuditOptions(cmd: Command): Command {
  return addStoreOption(cmd)
    .option("--loop <id>", "only this loop's events")
    .option("--trace <id>", "only this iteration's events (its trace id, or its first 8 hex digits as pulse run prints them)")
    .option("-w, --workspace <id>", "only this workspace's events")
    .option("--limit <n>", "events per page", "50")
    .option("--after <position>", "the page after this position (the last line of a page names it)")
    .option("--json", "JSON lines");
}

function summary(data: Record<string, unknown> | undefined): string {
  if (!data) return "";
  const parts: string[] = [];
  for (const [k, v] of Object.entries(data)) {
    const text = typeof v === "string" ? v : JSON.stringify(v);
    parts.push(`${k}=${text.length > 60 ? `${text.slice(0, 57)}...` : text}`);
  }
  return parts.join(" ");
}

function line(e: StoredAuditEvent & { position: number }): string {
  const ev = e.event;
  return [String(e.position).padStart(6), ev.timestamp, ev.workspace_id, ev.loop_id.padEnd(24), ev.trace_id.slice(0, 8), `#${ev.seq}`.padEnd(4), ev.event_type.padEnd(18), ev.phase_id ?? "-", summary(ev.data)].join("  ").trimEnd();
}

async function withStore(opts: { store?: string }, io: CliIO, command: string, use: (store: Store) => Promise<number>): Promise<number> {
  const store = await openStoreForCli(storeSpec(opts.store, io), io, command, { readonly: true });
  if (!store) return EXIT.problems;
  try {
    return await use(store);
  } catch (error) {
    // A file damaged where only this read reaches it: the same one line as at open.
    if (!(error instanceof StoreError)) throw error;
    io.stderr(`${command}: ${error.message}\n`);
    return EXIT.problems;
  } finally {
    await store.close();
  }
}

export async function runAudit(opts: AuditCliOptions, io: CliIO): Promise<number> {
  const limit = parseCount("--limit", opts.limit ?? "50") || 50;
  const after = parseCount("--after", opts.after) ?? 0;
  return withStore(opts, io, "pulse audit", async (store) => {
    const filter: AuditFilter = { limit, after };
    if (opts.loop !== undefined) filter.loop_id = opts.loop;
    if (opts.workspace !== undefined) filter.workspace_id = opts.workspace;
    // The 8 hex digits pulse run prints name the iteration too (trace-prefix.ts).
    if (opts.trace !== undefined) filter.trace_id = await resolveTrace(store, opts.trace, filter);
    const page = await store.queryAudit(filter);
    for (const e of page.events) io.stdout(opts.json ? `${JSON.stringify({ position: e.position, chain_seq: e.chain_seq, prev_hash: e.prev_hash, hash: e.hash, ...e.event })}\n` : `${line(e)}\n`);
    if (!opts.json) {
      if (page.events.length === 0) io.stdout(`no audit events${after > 0 ? ` after position ${after}` : ""} in ${store.description}\n`);
      else if (page.next !== undefined) io.stdout(`more: pulse audit --after ${page.next}${opts.store ? ` --store ${opts.store}` : ""}\n`);
    }
    return EXIT.ok;
  });
}

export async function runAuditVerify(opts: { store?: string; workspace?: string; json?: boolean }, io: CliIO): Promise<number> {
  return withStore(opts, io, "pulse audit verify", async (store) => {
    const reports = await store.verifyAudit(opts.workspace);
    const broken = reports.filter((r) => !r.ok);
    const events = reports.reduce((n, r) => n + r.events, 0);
    if (opts.json) io.stdout(`${JSON.stringify({ ok: broken.length === 0, chains: reports })}\n`);
    else {
      // A link of the chain by its number; a trace (a seq gap, a journaled step without events) by its reason, which names it.
      for (const r of broken) io.stdout(`broken: workspace ${r.workspace_id}: ${r.broken?.trace_id !== undefined ? "" : `event ${r.broken?.chain_seq}${r.broken?.event_id ? ` (${r.broken.event_id})` : ""}: `}${r.broken?.reason}\n`);
      if (broken.length === 0) io.stdout(`ok: ${reports.length} chain${reports.length === 1 ? "" : "s"}, ${events} event${events === 1 ? "" : "s"} verified in ${store.description}\n`);
    }
    return broken.length === 0 ? EXIT.ok : EXIT.problems;
  });
}
