/**
 * The §9.3 audit substrate over a Store's trail: what a loop's audit slot is when the store
 * serves it. Appends made through it (outside a phase's unit of work) are committed one by one;
 * the runtime's own events arrive with their phase's unit instead.
 */
import { SubstrateRequestError, type AuditEvent, type AuditSubstrate, type CallContext } from "../../src/substrates/contracts.js";
import type { Store } from "../../src/store/contracts.js";
import { jsonEqual } from "./json.js";
import { checkContext, describe, optionalString, requireArgs, requireString } from "./validate.js";
import { instant, parseRfc3339, validEvent } from "../memory/audit.js";

const SLOT = "audit";
const PAGE = 10_000;

export class StoreAudit implements AuditSubstrate {
  constructor(private readonly store: Pick<Store, "commit" | "queryAudit">) {}

  async append_event(args: { event: AuditEvent }, ctx: CallContext): Promise<{ event_id: string }> {
    checkContext(SLOT, ctx);
    const event = validEvent(requireArgs(SLOT, "append_event", args).event);
    if (event.trace_id !== ctx.trace_id) throw new SubstrateRequestError(SLOT, "TRACE_MISMATCH", `append_event: event.trace_id ${describe(event.trace_id)} is not the call's trace_id "${ctx.trace_id}"`);
    if (event.workspace_id !== ctx.workspace_id) throw new SubstrateRequestError(SLOT, "WORKSPACE_MISMATCH", `append_event: event.workspace_id ${describe(event.workspace_id)} is not the call's workspace_id "${ctx.workspace_id}"`);
    const existing = (await this.trace(event.trace_id, ctx.workspace_id)).find((e) => e.event_id === event.event_id);
    if (existing) {
      if (jsonEqual(existing, event)) return { event_id: event.event_id };
      throw new SubstrateRequestError(SLOT, "DUPLICATE_EVENT_ID", `append_event: event_id "${event.event_id}" was already appended with different content; audit events are never rewritten`);
    }
    await this.store.commit({ loop_id: event.loop_id, workspace_id: event.workspace_id, trace_id: event.trace_id, audit: [event] });
    return { event_id: event.event_id };
  }

  async query_by_trace(args: { trace_id: string; since?: string; until?: string }, ctx: CallContext): Promise<AuditEvent[]> {
    checkContext(SLOT, ctx);
    const a = requireArgs(SLOT, "query_by_trace", args);
    const traceId = requireString(SLOT, "query_by_trace", a, "trace_id");
    const since = instant(optionalString(SLOT, "query_by_trace", a, "since"), "since");
    const until = instant(optionalString(SLOT, "query_by_trace", a, "until"), "until");
    const events = await this.trace(traceId, ctx.workspace_id);
    return events.filter((e) => {
      const at = parseRfc3339(e.timestamp);
      return (since === undefined || at >= since) && (until === undefined || at <= until);
    });
  }

  /** The trace's events in the workspace, by seq then append order. */
  private async trace(traceId: string, workspaceId: string): Promise<AuditEvent[]> {
    const out: AuditEvent[] = [];
    for (let after: number | undefined = 0; after !== undefined; ) {
      const page = await this.store.queryAudit({ trace_id: traceId, workspace_id: workspaceId, after, limit: PAGE });
      for (const e of page.events) out.push(e.event);
      after = page.next;
    }
    return out.sort((x, y) => x.seq - y.seq);
  }
}
