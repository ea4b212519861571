/**
 * The loop under certification and what it runs with: its manifest, the manifests of the loops
 * it names (companions: its inner loops, its connections' targets, the loops whose signals start
 * it), and scripted stand-ins for the ones not given, so that every signal lands and every inner
 * loop exists. The suite's scripted handlers (PhaseScript) play the stand-ins.
 */
import type { PhaseScript } from "../driver/protocol.js";
import { loop } from "../suite/manifests.js";
import type { HandlerModule } from "./handlers.js";

export type ManifestValue = Record<string, any>;

export interface LoadedManifest {
  /** Where it came from: a path, or "stand-in". */
  file: string;
  manifest: ManifestValue;
  /** Scripted handlers (stand-ins only); other loops run with the subject's handlers. */
  scripts?: Record<string, PhaseScript>;
}

export interface LoopSubject {
  file: string;
  manifest: ManifestValue;
  /** sha256:<hex> of the manifest file's bytes. */
  digest: string;
  /** Given manifests of the loops it names, transitively. */
  companions: LoadedManifest[];
  /** Stand-ins for the loops it names that were not given. */
  standIns: LoadedManifest[];
  handlers: HandlerModule;
  /** The input of the iterations the tests start. */
  input: unknown;
}

export const loopId = (m: ManifestValue): string => String(m.loop_id);

/** The loops a manifest names: inner loops, connection targets, senders of its cross_loop_signal cadences. */
export function namedLoops(m: ManifestValue): string[] {
  const out = new Set<string>();
  for (const inner of m.nesting?.inner_loops ?? []) if (typeof inner?.loop_id === "string") out.add(inner.loop_id);
  for (const c of m.connections ?? []) if (typeof c?.to_loop === "string") out.add(c.to_loop);
  for (let cadence = m.cadence; cadence; cadence = cadence.fallback) {
    if (cadence.type === "cross_loop_signal" && typeof cadence.params?.from_loop === "string") out.add(cadence.params.from_loop);
  }
  out.delete(String(m.loop_id));
  return [...out];
}

/** The given manifests the subject needs, following names transitively. */
export function companionsOf(subject: ManifestValue, candidates: readonly { file: string; manifest: ManifestValue }[]): { companions: LoadedManifest[]; missing: string[] } {
  const byId = new Map(candidates.map((c) => [loopId(c.manifest), c] as const));
  const companions: LoadedManifest[] = [];
  const missing: string[] = [];
  const seen = new Set([loopId(subject)]);
  const queue = [...namedLoops(subject)];
  while (queue.length > 0) {
    const id = queue.shift()!;
    if (seen.has(id)) continue;
    seen.add(id);
    const found = byId.get(id);
    if (!found) {
      missing.push(id);
      continue;
    }
    companions.push({ file: found.file, manifest: found.manifest });
    queue.push(...namedLoops(found.manifest));
  }
  return { companions, missing };
}

function freshId(base: string, taken: Set<string>): string {
  let id = base;
  for (let n = 2; taken.has(id); n++) id = `${base}_${n}`;
  taken.add(id);
  return id;
}

/**
 * A loop that stands in for one that was not given: it accepts what the loops that name it send
 * (a signal at `to_phase`, an inner-loop run), and when it runs nested it reports a stable
 * ConsolidationEvent, so an until_stable wait ends.
 */
export function standIn(id: string, all: readonly ManifestValue[]): LoadedManifest {
  const entries = new Set<string>();
  for (const m of all) {
    for (const c of m.connections ?? []) if (c?.to_loop === id && typeof c.to_phase === "string") entries.add(c.to_phase);
  }
  const taken = new Set(entries);
  const first = entries.size > 0 ? [...entries][0]! : freshId("receive", taken);
  const phases = [{ id: first, kind: "retrieve" }, ...[...entries].slice(1).map((e) => ({ id: e, kind: "retrieve" })), { id: freshId("settle", taken), kind: "consolidate" }];
  const settle = phases.at(-1)!.id;
  return {
    file: "stand-in",
    manifest: loop(id, phases),
    scripts: { [settle]: { output: { token: "ConsolidationEvent", version: "0.1", trace_id: "$trace", timescale: "fast", convergence_status: "stable" } } },
  };
}

/** The emit phases and tokens of every connection, for the recording handlers. */
export function emitsOf(manifests: readonly ManifestValue[]): (loopId: string, phaseId: string) => any[] {
  const table = new Map<string, string[]>();
  for (const m of manifests) {
    for (const c of m.connections ?? []) {
      const key = `${m.loop_id}/${c.emit_phase}`;
      table.set(key, [...(table.get(key) ?? []), c.token]);
    }
  }
  return (l, p) => table.get(`${l}/${p}`) ?? [];
}
