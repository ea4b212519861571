/**
 * The audit trail's hash chain, one per workspace, shared by every store (SQLite, PostgreSQL,
 * memory): an event's hash is BLAKE3 over the previous event's hash, a newline and the event's
 * RFC 8785 canonical JSON, starting from GENESIS. An event edited, removed or reordered behind the
 * store's back breaks a link that verifyChain reports.
 */
import { canonicalJson } from "../json/canonical-json.js";
import { blake3Hex } from "../runtime/signature.js";
import type { AuditEvent } from "../substrates/contracts.js";

export const GENESIS = `blake3:${"0".repeat(64)}`;

/**
 * The RFC 8785 canonical JSON of an event's §9.3 fields (what the chain hashes), written directly
 * in key order (data, event_id, event_type, loop_id, phase_id, seq, signature, timestamp,
 * trace_id, workspace_id): this runs for every event a phase commits. `data` is the canonical
 * JSON of event.data when the caller has it.
 */
export function eventCanonical(e: AuditEvent, data: string | null = e.data === undefined ? null : canonicalJson(e.data)): string {
  // A field missing (an event not built by the runtime) is left out, as JSON leaves it out.
  if (typeof e.event_id !== "string" || typeof e.event_type !== "string" || typeof e.loop_id !== "string" || (e.phase_id !== null && typeof e.phase_id !== "string") || typeof e.seq !== "number" || typeof e.signature !== "string" || typeof e.timestamp !== "string" || typeof e.trace_id !== "string" || typeof e.workspace_id !== "string") {
    const { event_id, event_type, trace_id, loop_id, phase_id, workspace_id, timestamp, signature, seq } = e;
    return canonicalJson({ data: e.data, event_id, event_type, trace_id, loop_id, phase_id, workspace_id, timestamp, signature, seq });
  }
  return `{${data === null ? "" : `"data":${data},`}"event_id":${canonicalJson(e.event_id)},"event_type":${canonicalJson(e.event_type)},"loop_id":${canonicalJson(e.loop_id)},"phase_id":${e.phase_id === null ? "null" : canonicalJson(e.phase_id)},"seq":${canonicalJson(e.seq)},"signature":${canonicalJson(e.signature)},"timestamp":${canonicalJson(e.timestamp)},"trace_id":${canonicalJson(e.trace_id)},"workspace_id":${canonicalJson(e.workspace_id)}}`;
}

export function chainHash(prevHash: string, event: AuditEvent, canonical: string = eventCanonical(event)): string {
  return `blake3:${blake3Hex(`${prevHash}\n${canonical}`)}`;
}

/** A link of a chain as stored. */
export interface ChainLink {
  chain_seq: number;
  event: AuditEvent;
  prev_hash: string;
  hash: string;
}

export interface ChainCheck {
  ok: boolean;
  events: number;
  broken?: { chain_seq: number; event_id: string | null; reason: string };
}

/**
 * Walks a workspace's links in chain order and reports the first broken one; `head` (what the
 * store recorded as the chain's end) catches events removed from its end. A head recorded as a
 * checkpoint (`reached`) is a point the chain must reach: it may have grown since.
 */
export function verifyChain(links: readonly ChainLink[], head?: { next_seq: number; hash: string; reached?: boolean }): ChainCheck {
  let prev = GENESIS;
  let i = 0;
  for (const link of links) {
    const broken = (reason: string): ChainCheck => ({ ok: false, events: links.length, broken: { chain_seq: i, event_id: link.event.event_id, reason } });
    if (link.chain_seq !== i) return broken(`event ${i} of the chain is missing (the next one is number ${link.chain_seq})`);
    if (link.prev_hash !== prev) return broken("its prev_hash is not the hash of the event before it");
    if (chainHash(prev, link.event) !== link.hash) return broken("its content does not match its hash: it was changed after it was appended");
    prev = link.hash;
    i++;
  }
  if (!head) return { ok: true, events: i };
  const removed = { ok: false, events: i, broken: { chain_seq: i, event_id: null, reason: `the chain should have ${head.reached ? "at least " : ""}${head.next_seq} events and has ${i}: events were removed from its end` } };
  if (!head.reached) return head.next_seq !== i || head.hash !== prev ? removed : { ok: true, events: i };
  if (i < head.next_seq) return removed;
  const at = head.next_seq === 0 ? GENESIS : (links[head.next_seq - 1] as ChainLink).hash;
  if (at !== head.hash) return { ok: false, events: i, broken: { chain_seq: head.next_seq - 1, event_id: links[head.next_seq - 1]?.event.event_id ?? null, reason: "its hash is not the one the store's checkpoint of the chain recorded: the chain was rewritten from there" } };
  return { ok: true, events: i };
}
