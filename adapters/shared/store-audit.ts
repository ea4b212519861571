/**
 * The §9.3 audit substrate over a Store's trail: what a loop's audit slot is when the store
 * serves it. Appends made through it (outside a phase's unit of work) are committed one by one;
 * the runtime's own events arrive with their phase's unit instead.
 */
import type { AuditEvent, AuditSubstrate, CallContext } from "../../src/substrates/contracts.js";
import type { Store } from "../../src/store/contracts.js";
import { appendedEvent, replayed, traceQuery } from "../memory/audit.js";

const PAGE = 10_000;

export class StoreAudit implements AuditSubstrate {
  constructor(private readonly store: Pick<Store, "commit" | "queryAudit">) {}

  async append_event(args: { event: AuditEvent }, ctx: CallContext): Promise<{ event_id: string }> {
    const event = appendedEvent(args, ctx);
    const existing = (await this.trace(event.trace_id, ctx.workspace_id)).find((e) => e.event_id === event.event_id);
    if (existing) return replayed(existing, event);
    await this.store.commit({ loop_id: event.loop_id, workspace_id: event.workspace_id, trace_id: event.trace_id, audit: [event] });
    return { event_id: event.event_id };
  }

  async query_by_trace(args: { trace_id: string; since?: string; until?: string }, ctx: CallContext): Promise<AuditEvent[]> {
    const { traceId, within } = traceQuery(args, ctx);
    return (await this.trace(traceId, ctx.workspace_id)).filter(within);
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
