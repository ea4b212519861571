/**
 * Reference resolution for one loop and for a system of loops. The validator turns unresolved
 * references into diagnostics; the diagram tool draws them as dangling edges; the runtime reads
 * the parsed endpoints and triggers. One resolver, so all three always agree.
 */
import type { EndpointRef } from "../grammar/endpoint.js";
import { parseEndpointsCached as parseEndpoints, parseExpressionCached as parseExpression, parseTriggerCached as parseTrigger } from "../grammar/cached.js";
import type { Expr } from "../grammar/expression/index.js";
import type { GrammarError } from "../grammar/grammar-error.js";
import { asObject, field, str, type Json } from "./access.js";
import { closest } from "./suggest.js";

export type PhaseRefRole = "closure.from_phase" | "closure.to_phase" | "connection.emit_phase" | "endpoint" | "inner_loop.trigger";

export interface PhaseRef {
  role: PhaseRefRole;
  pointer: string;
  phase: string;
  /** Where the phase id sits inside the string value (for `a|phase:x` or a trigger). */
  offset?: number;
  length?: number;
  found: boolean;
  suggestion?: string;
}

export type GrammarRule = "pulse/endpoint-syntax" | "pulse/trigger-syntax" | "pulse/expression-syntax";

export interface GrammarIssue {
  rule: GrammarRule;
  pointer: string;
  error: GrammarError;
}

export interface ParsedEndpoint {
  pointer: string;
  refs: EndpointRef[];
}

export interface ParsedTrigger {
  pointer: string;
  innerLoopId: string | undefined;
  phase: string;
  condition?: Expr;
}

export interface Item {
  item: Json;
  index: number;
}

export interface PhaseItem extends Item {
  id: string | undefined;
  kind: string | undefined;
}

export interface LoopModel {
  loopId: string | undefined;
  /** The manifest's parts, read once so that rules do not each walk the document again. */
  phases: PhaseItem[];
  connections: Item[];
  innerLoops: Item[];
  closure: Json | undefined;
  nesting: Json | undefined;
  /** The cadence and its fallbacks, outermost first, with their pointers. */
  cadences: { cadence: Json; pointer: string }[];
  /** Phase ids in declared order (duplicates included, so the duplicate rule can see them). */
  phaseIds: string[];
  phaseIndex: Map<string, number>;
  refs: PhaseRef[];
  endpoints: ParsedEndpoint[];
  triggers: ParsedTrigger[];
  conditions: { pointer: string; expr: Expr }[];
  grammarIssues: GrammarIssue[];
}

const ENDPOINT_FIELDS = [
  ["inputs", "from"],
  ["outputs", "to"],
] as const;

function items(list: unknown): Item[] {
  const out: Item[] = [];
  if (!Array.isArray(list)) return out;
  for (let index = 0; index < list.length; index++) {
    const item = asObject(list[index]);
    if (item) out.push({ item, index });
  }
  return out;
}

export function resolveLoop(manifest: unknown): LoopModel {
  const phases: PhaseItem[] = [];
  const phaseIds: string[] = [];
  const phaseIndex = new Map<string, number>();
  for (const { item, index } of items(field(manifest, "phases"))) {
    const id = str(item, "id");
    phases.push({ item, index, id, kind: str(item, "kind") });
    if (id === undefined) continue;
    phaseIds.push(id);
    if (!phaseIndex.has(id)) phaseIndex.set(id, index);
  }
  const nesting = asObject(field(manifest, "nesting"));
  const cadences: { cadence: Json; pointer: string }[] = [];
  let cadence = asObject(field(manifest, "cadence"));
  for (let pointer = "/cadence"; cadence && cadences.length < 16; pointer += "/fallback") {
    cadences.push({ cadence, pointer });
    cadence = asObject(field(cadence, "fallback"));
  }
  const model: LoopModel = {
    loopId: str(manifest, "loop_id"),
    phases,
    connections: items(field(manifest, "connections")),
    innerLoops: items(field(nesting, "inner_loops")),
    closure: asObject(field(manifest, "closure")),
    nesting,
    cadences,
    phaseIds,
    phaseIndex,
    refs: [],
    endpoints: [],
    triggers: [],
    conditions: [],
    grammarIssues: [],
  };
  const ref = (role: PhaseRefRole, pointer: string, phase: string, offset?: number, length?: number): void => {
    const found = phaseIndex.has(phase);
    const r: PhaseRef = { role, pointer, phase, found };
    if (offset !== undefined) {
      r.offset = offset;
      r.length = length;
    }
    if (!found) {
      const s = closest(phase, phaseIndex.keys());
      if (s !== undefined) r.suggestion = s;
    }
    model.refs.push(r);
  };

  const closure = model.closure;
  const from = str(closure, "from_phase");
  if (from !== undefined) ref("closure.from_phase", "/closure/from_phase", from);
  const to = str(closure, "to_phase");
  if (to !== undefined) ref("closure.to_phase", "/closure/to_phase", to);
  const via = str(closure, "via");
  if (via !== undefined) parseEndpointField(model, "/closure/via", via, ref);

  for (const { item, index } of phases) {
    for (const [group, key] of ENDPOINT_FIELDS) {
      const value = str(field(item, group), key);
      if (value !== undefined) parseEndpointField(model, `/phases/${index}/${group}/${key}`, value, ref);
    }
  }

  for (const { item, index } of model.connections) {
    const emit = str(item, "emit_phase");
    if (emit !== undefined) ref("connection.emit_phase", `/connections/${index}/emit_phase`, emit);
    const condition = str(item, "emit_condition");
    if (condition !== undefined) {
      const pointer = `/connections/${index}/emit_condition`;
      const parsed = parseExpression(condition);
      if (parsed.ok) model.conditions.push({ pointer, expr: parsed.value });
      else model.grammarIssues.push({ rule: "pulse/expression-syntax", pointer, error: parsed.error });
    }
  }

  for (const { item, index } of model.innerLoops) {
    const trigger = str(item, "trigger");
    if (trigger === undefined) continue;
    const pointer = `/nesting/inner_loops/${index}/trigger`;
    const parsed = parseTrigger(trigger);
    if (!parsed.ok) {
      model.grammarIssues.push({ rule: "pulse/trigger-syntax", pointer, error: parsed.error });
      continue;
    }
    const t: ParsedTrigger = { pointer, innerLoopId: str(item, "loop_id"), phase: parsed.value.phase };
    if (parsed.value.condition) t.condition = parsed.value.condition;
    model.triggers.push(t);
    ref("inner_loop.trigger", pointer, parsed.value.phase, parsed.value.phaseOffset, parsed.value.phase.length);
  }
  return model;
}

function parseEndpointField(
  model: LoopModel,
  pointer: string,
  value: string,
  ref: (role: PhaseRefRole, pointer: string, phase: string, offset?: number, length?: number) => void,
): void {
  const parsed = parseEndpoints(value);
  if (!parsed.ok) {
    model.grammarIssues.push({ rule: "pulse/endpoint-syntax", pointer, error: parsed.error });
    return;
  }
  model.endpoints.push({ pointer, refs: parsed.value });
  for (const e of parsed.value) {
    if (e.kind === "phase") {
      // Point at the id itself, after the `phase:` prefix.
      const prefix = value.indexOf(":", e.offset) + 1;
      ref("endpoint", pointer, e.phase, prefix, e.phase.length);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Systems of loops

export interface LoopEntry {
  file: string;
  manifest: Json;
  model: LoopModel;
}

export type SystemRefRole = "connection" | "inner_loop" | "parent_loop" | "signal_source";

export interface SystemRef {
  role: SystemRefRole;
  file: string;
  pointer: string;
  fromLoop: string;
  toLoop: string;
  toPhase?: string;
  /** Pointer of the phase field inside the referring manifest (connection to_phase, from_phase). */
  phasePointer?: string;
  status: "resolved" | "missing-phase" | "external";
  target?: LoopEntry;
  suggestion?: string;
}

export interface ResolvedSystem {
  byLoopId: Map<string, LoopEntry[]>;
  refs: SystemRef[];
}

export function resolveSystem(entries: readonly LoopEntry[]): ResolvedSystem {
  const byLoopId = new Map<string, LoopEntry[]>();
  for (const e of entries) {
    if (e.model.loopId === undefined) continue;
    const list = byLoopId.get(e.model.loopId) ?? [];
    list.push(e);
    byLoopId.set(e.model.loopId, list);
  }
  const refs: SystemRef[] = [];
  const add = (entry: LoopEntry, role: SystemRefRole, pointer: string, toLoop: string | undefined, toPhase?: string, phasePointer?: string): void => {
    if (toLoop === undefined || entry.model.loopId === undefined) return;
    const target = byLoopId.get(toLoop)?.[0];
    const r: SystemRef = { role, file: entry.file, pointer, fromLoop: entry.model.loopId, toLoop, status: "external" };
    if (toPhase !== undefined) r.toPhase = toPhase;
    if (phasePointer !== undefined) r.phasePointer = phasePointer;
    if (target) {
      r.target = target;
      r.status = toPhase === undefined || target.model.phaseIndex.has(toPhase) ? "resolved" : "missing-phase";
      if (r.status === "missing-phase" && toPhase !== undefined) {
        const s = closest(toPhase, target.model.phaseIndex.keys());
        if (s !== undefined) r.suggestion = s;
      }
    }
    refs.push(r);
  };

  for (const entry of entries) {
    const { model } = entry;
    for (const { item, index } of model.connections) {
      const toPhase = str(item, "to_phase");
      add(entry, "connection", `/connections/${index}/to_loop`, str(item, "to_loop"), toPhase, toPhase === undefined ? undefined : `/connections/${index}/to_phase`);
    }
    for (const { item, index } of model.innerLoops) {
      add(entry, "inner_loop", `/nesting/inner_loops/${index}/loop_id`, str(item, "loop_id"));
    }
    add(entry, "parent_loop", "/nesting/parent_loop", str(model.nesting, "parent_loop"));
    for (const { cadence, pointer } of model.cadences) {
      if (str(cadence, "type") !== "cross_loop_signal") continue;
      const params = field(cadence, "params");
      const fromPhase = str(params, "from_phase");
      add(entry, "signal_source", `${pointer}/params/from_loop`, str(params, "from_loop"), fromPhase, fromPhase === undefined ? undefined : `${pointer}/params/from_phase`);
    }
  }
  return { byLoopId, refs };
}

/** Nesting edges parent → inner, from both `inner_loops` and `parent_loop`, with cycles found by DFS. */
export function nestingCycles(system: ResolvedSystem): string[][] {
  // A cycle through other loops needs at least two nesting edges.
  if (system.refs.filter((r) => r.role === "inner_loop" || r.role === "parent_loop").length < 2) return [];
  const edges = new Map<string, Set<string>>();
  const link = (from: string, to: string): void => {
    const set = edges.get(from) ?? new Set<string>();
    set.add(to);
    edges.set(from, set);
  };
  for (const r of system.refs) {
    if (r.role === "inner_loop") link(r.fromLoop, r.toLoop);
    if (r.role === "parent_loop") link(r.toLoop, r.fromLoop);
  }
  const cycles: string[][] = [];
  const seen = new Set<string>();
  const state = new Map<string, "active" | "done">();
  const stack: string[] = [];
  const visit = (node: string): void => {
    state.set(node, "active");
    stack.push(node);
    for (const next of [...(edges.get(node) ?? [])].sort()) {
      const s = state.get(next);
      if (s === "active") {
        const cycle = stack.slice(stack.indexOf(next));
        const key = [...cycle].sort().join(" ");
        if (!seen.has(key)) {
          seen.add(key);
          cycles.push([...cycle, next]);
        }
      } else if (s === undefined) {
        visit(next);
      }
    }
    stack.pop();
    state.set(node, "done");
  };
  for (const node of [...edges.keys()].sort()) if (!state.has(node)) visit(node);
  return cycles;
}
