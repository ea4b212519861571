/**
 * The phase handlers of `coding.guidance_watch`. Each phase's output carries what the next one
 * needs (the project's paths travel in it), so a handler is a pure function of its input plus
 * the one side effect its kind allows: scan_files reads the files, classify_change decides
 * nothing but the classification, append_event writes the ledger and the state, track_ack reads
 * them and remembers acknowledgements in the memory substrate. The caller holds the directory's
 * lock for the whole iteration (GuidanceSidecar.scan).
 */
import type { PhaseHandler } from "../../runtime/handler-context.js";
import { appendEvents, diffFiles, eventsFor, readEvents, type FileChange, type GuidanceEvent } from "./events.js";
import { guidancePaths, snapshotFiles, type WatchedFile } from "./files.js";
import { isPlanInvalidating, shouldInterrupt, type InterruptDecision } from "./policy.js";
import { freshState, readState, writeState } from "./state.js";

export const GUIDANCE_PHASES = ["scan_files", "classify_change", "append_event", "track_ack"] as const;

/** The iteration's input: whose `.pulse/` to scan. */
export interface ScanInput {
  root: string;
  dir: string;
}

export interface FileChanges extends ScanInput {
  changes: FileChange[];
}

export type ChangeClass = "invalidating" | "informational" | "unchanged";

export interface ClassifiedChanges extends FileChanges {
  next: "append_event";
  decision: ChangeClass;
  invalidating: WatchedFile[];
}

export interface AppendedEvents extends ScanInput {
  action_id: string;
  causal_parent_ids: string[];
  decision: ChangeClass;
  events: GuidanceEvent[];
}

export interface Tracked extends AppendedEvents {
  interrupt: InterruptDecision;
}

/** classify_change's rule, as a pure function. */
export function classify(changes: readonly FileChange[]): { decision: ChangeClass; invalidating: WatchedFile[] } {
  const invalidating = changes.filter((c) => isPlanInvalidating({ path: `.pulse/${c.file}` })).map((c) => c.file);
  return { decision: changes.length === 0 ? "unchanged" : invalidating.length > 0 ? "invalidating" : "informational", invalidating };
}

export function guidanceHandlers(): Record<(typeof GUIDANCE_PHASES)[number], PhaseHandler> {
  return {
    scan_files: (ctx): FileChanges => {
      const { root, dir } = ctx.input as ScanInput;
      const paths = guidancePaths(root, dir);
      const state = readState(paths.state);
      return { root, dir, changes: diffFiles(state?.last_hashes ?? {}, snapshotFiles(paths)) };
    },

    classify_change: (ctx): ClassifiedChanges => {
      const x = ctx.input as FileChanges;
      return { ...x, next: "append_event", ...classify(x.changes) };
    },

    append_event: (ctx): AppendedEvents => {
      const x = ctx.input as ClassifiedChanges;
      const paths = guidancePaths(x.root, x.dir);
      const events = eventsFor(x.changes);
      // The ledger first, then the hashes: a crash between them records the change again, never loses it.
      appendEvents(paths.events, events);
      if (events.length > 0) {
        const state = readState(paths.state) ?? freshState(paths.root, {});
        const last_hashes = { ...state.last_hashes };
        for (const c of x.changes) last_hashes[c.file] = c.digest?.sha256 ?? null;
        writeState(paths.state, { ...state, last_hashes });
      }
      return { root: x.root, dir: x.dir, action_id: events[0] ? `append_${events[0].id}` : `append_none_${ctx.signature.slice(7, 23)}`, causal_parent_ids: [], decision: x.decision, events };
    },

    track_ack: async (ctx): Promise<Tracked> => {
      const x = ctx.input as AppendedEvents;
      const paths = guidancePaths(x.root, x.dir);
      const state = readState(paths.state);
      const { events } = readEvents(paths.events);
      const interrupt = shouldInterrupt(events, { last_acknowledged_event_id: state?.last_acknowledged_event_id ?? null, last_acknowledged_plan_sha256: state?.last_acknowledged_plan_sha256 ?? null });
      // Each acknowledgement is remembered once, with the plan it was given for.
      const acked = state?.last_acknowledged_event_id;
      if (acked) {
        const id = `ack_${acked}`;
        const known = await ctx.substrates.memory.retrieve_context({ query: { type: "ack" }, k: 10_000 });
        if (!known.nodes.some((n) => n.id === id)) {
          await ctx.substrates.memory.store_node({ node: { id, type: "ack", content: { event_id: acked, plan_sha256: state.last_acknowledged_plan_sha256, at: state.last_acknowledged_at } } });
        }
      }
      return { ...x, interrupt };
    },
  };
}
