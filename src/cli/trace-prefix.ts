/**
 * `pulse audit --trace`: the trace id, or its first hex digits as the live trace of `pulse run`
 * prints them (8), resolved against the audit trail: a prefix that one iteration's trace id starts
 * with names that iteration; one that several start with is refused, with how many.
 */
import type { AuditFilter, Store } from "../store/contracts.js";
import { UsageError } from "./exit-codes.js";

const PAGE = 1000;

/** The full trace id `given` names, in the events `scope` selects (loop, workspace). */
export async function resolveTrace(store: Store, given: string, scope: Pick<AuditFilter, "loop_id" | "workspace_id">): Promise<string> {
  const value = given.trim().toLowerCase();
  if (!/^[0-9a-f]{4,32}$/.test(value)) throw new UsageError(`--trace takes a trace id (32 hex digits) or its first 4 or more, as pulse run prints 8, not ${JSON.stringify(given)}`);
  if (value.length === 32) return value;
  const found = new Set<string>();
  for (let after = 0; ; ) {
    const page = await store.queryAudit({ ...(scope.loop_id !== undefined ? { loop_id: scope.loop_id } : {}), ...(scope.workspace_id !== undefined ? { workspace_id: scope.workspace_id } : {}), limit: PAGE, after });
    for (const e of page.events) if (e.event.trace_id.startsWith(value)) found.add(e.event.trace_id);
    if (page.next === undefined) break;
    after = page.next;
  }
  const [only, ...more] = [...found];
  if (more.length > 0) throw new UsageError(`--trace ${value}: ${found.size} trace ids start with it (${[...found].slice(0, 3).join(", ")}${found.size > 3 ? ", …" : ""}): give more of it`);
  // None: the query finds no event, and says so.
  return only ?? value;
}
