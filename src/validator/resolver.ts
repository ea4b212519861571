/**
 * Reference resolution for one loop and for a system of loops. The validator turns unresolved
 * references into diagnostics; the diagram tool draws them as dangling edges; the runtime reads
 * the parsed endpoints and triggers. One resolver, so all three always agree.
 */
import type { EndpointRef } from "../grammar/endpoint.js";
import { parseEndpointsCached as parseEndpoints, parseExpressionCached as parseExpression, parseTriggerCached as parseTrigger } from "../grammar/cached.js";
import type { Expr } from "../grammar/expression/index.js";
import type { GrammarError } from "../grammar/grammar-error.js";
import { childPath, type Path } from "../source/source-node.js";
import { asObject, asString, type Json } from "./access.js";
import { PhaseIndex } from "./phase-index.js";
import { closest } from "../grammar/suggest.js";

export type PhaseRefRole = "closure.from_phase" | "closure.to_phase" | "connection.emit_phase" | "endpoint" | "inner_loop.trigger";

export interface PhaseRef {
  role: PhaseRefRole;
  path: Path;
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
  path: Path;
  error: GrammarError;
}

export interface ParsedEndpoint {
  path: Path;
  refs: readonly EndpointRef[];
}

export interface ParsedTrigger {
  path: Path;
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
  /** The index of the first phase with this id: not `index` when this one is a duplicate. */
  first: number;
}

export interface LoopModel {
  loopId: string | undefined;
  /** The manifest's parts, read once so that rules do not each walk the document again. */
  phases: PhaseItem[];
  connections: Item[];
  innerLoops: Item[];
  closure: Json | undefined;
  nesting: Json | undefined;
  /** The cadence and its fallbacks, outermost first, with their paths. */
  cadences: { cadence: Json; path: Path }[];
  /** Each phase id and the index of the phase that first declares it (a later one is a duplicate). */
  phaseIndex: PhaseIndex;
  refs: PhaseRef[];
  endpoints: ParsedEndpoint[];
  triggers: ParsedTrigger[];
  conditions: { path: Path; expr: Expr }[];
  grammarIssues: GrammarIssue[];
}

/** Object items of an array, with their index (non-objects skipped: the schema reports them). */
function items(list: unknown): Item[] {
  const out: Item[] = [];
  if (!Array.isArray(list)) return out;
  for (let index = 0; index < list.length; index++) {
    const item = asObject(list[index]);
    if (item) out.push({ item, index });
  }
  return out;
}

// Field reads below are plain property reads on objects checked by asObject: each read site
// then stays monomorphic, where a shared `field(obj, key)` helper made every read a slow
// megamorphic lookup. Safe because no field named here exists on Object.prototype (a test
// checks every property name read in the validator).
export function resolveLoop(manifest: unknown): LoopModel {
  const m = asObject(manifest);
  const phases: PhaseItem[] = [];
  const phaseIndex = new PhaseIndex();
  const list = m?.phases;
  if (Array.isArray(list)) {
    for (let index = 0; index < list.length; index++) {
      const item = asObject(list[index]);
      if (!item) continue;
      const id = asString(item.id);
      const first = id === undefined ? index : phaseIndex.declare(id, index);
      phases.push({ item, index, id, kind: asString(item.kind), first });
    }
  }
  const nesting = asObject(m?.nesting);
  const cadences: { cadence: Json; path: Path }[] = [];
  let cadence = asObject(m?.cadence);
  for (let path: Path = ["cadence"]; cadence && cadences.length < 16; path = childPath(path, "fallback")) {
    cadences.push({ cadence, path });
    cadence = asObject(cadence.fallback);
  }
  const closure = asObject(m?.closure);
  const model: LoopModel = {
    loopId: asString(m?.loop_id),
    phases,
    connections: items(m?.connections),
    innerLoops: items(nesting?.inner_loops),
    closure,
    nesting,
    cadences,
    phaseIndex,
    refs: [],
    endpoints: [],
    triggers: [],
    conditions: [],
    grammarIssues: [],
  };

  const from = asString(closure?.from_phase);
  if (from !== undefined) addRef(model, "closure.from_phase", ["closure", "from_phase"], from);
  const to = asString(closure?.to_phase);
  if (to !== undefined) addRef(model, "closure.to_phase", ["closure", "to_phase"], to);
  const via = asString(closure?.via);
  if (via !== undefined) addEndpoint(model, ["closure", "via"], via);

  for (const { item, index } of phases) {
    const input = asString(asObject(item.inputs)?.from);
    if (input !== undefined) addEndpoint(model, ["phases", index, "inputs", "from"], input);
    const output = asString(asObject(item.outputs)?.to);
    if (output !== undefined) addEndpoint(model, ["phases", index, "outputs", "to"], output);
  }

  for (const { item, index } of model.connections) {
    const emit = asString(item.emit_phase);
    if (emit !== undefined) addRef(model, "connection.emit_phase", ["connections", index, "emit_phase"], emit);
    const condition = asString(item.emit_condition);
    if (condition !== undefined) {
      const path = ["connections", index, "emit_condition"];
      const parsed = parseExpression(condition);
      if (parsed.ok) model.conditions.push({ path, expr: parsed.value });
      else model.grammarIssues.push({ rule: "pulse/expression-syntax", path, error: parsed.error });
    }
  }

  for (const { item, index } of model.innerLoops) {
    const trigger = asString(item.trigger);
    if (trigger === undefined) continue;
    const path = ["nesting", "inner_loops", index, "trigger"];
    const parsed = parseTrigger(trigger);
    if (!parsed.ok) {
      model.grammarIssues.push({ rule: "pulse/trigger-syntax", path, error: parsed.error });
      continue;
    }
    const t: ParsedTrigger = { path, innerLoopId: asString(item.loop_id), phase: parsed.value.phase };
    if (parsed.value.condition) t.condition = parsed.value.condition;
    model.triggers.push(t);
    addRef(model, "inner_loop.trigger", path, parsed.value.phase, parsed.value.phaseOffset, parsed.value.phase.length);
  }
  return model;
}

function addRef(model: LoopModel, role: PhaseRefRole, path: Path, phase: string, offset?: number, length?: number): void {
  const found = model.phaseIndex.has(phase);
  // One object shape for every reference, so code reading them stays monomorphic.
  const r: PhaseRef = { role, path, phase, offset, length, found, suggestion: undefined };
  if (!found) r.suggestion = closest(phase, model.phaseIndex.keys());
  model.refs.push(r);
}

const PHASE_PREFIX = "phase:";

function addEndpoint(model: LoopModel, path: Path, value: string): void {
  const parsed = parseEndpoints(value);
  if (!parsed.ok) {
    model.grammarIssues.push({ rule: "pulse/endpoint-syntax", path, error: parsed.error });
    return;
  }
  const refs = parsed.value;
  model.endpoints.push({ path, refs });
  for (let i = 0; i < refs.length; i++) {
    const e = refs[i] as EndpointRef;
    if (e.kind === "phase") {
      // Point at the id itself, after the `phase:` prefix (the grammar allows nothing between).
      addRef(model, "endpoint", path, e.phase, e.offset + PHASE_PREFIX.length, e.phase.length);
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
  path: Path;
  fromLoop: string;
  toLoop: string;
  toPhase?: string;
  /** Path of the phase field inside the referring manifest (connection to_phase, from_phase). */
  phasePath?: Path;
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
    const id = e.model.loopId;
    if (id === undefined) continue;
    const list = byLoopId.get(id);
    if (list) list.push(e);
    else byLoopId.set(id, [e]);
  }
  const system: ResolvedSystem = { byLoopId, refs: [] };
  for (const entry of entries) {
    const { model } = entry;
    if (model.loopId === undefined) continue;
    for (const { item, index } of model.connections) {
      const toLoop = asString(item.to_loop);
      if (toLoop === undefined) continue;
      const toPhase = asString(item.to_phase);
      const phasePath = toPhase === undefined ? undefined : ["connections", index, "to_phase"];
      addSystemRef(system, entry, "connection", ["connections", index, "to_loop"], toLoop, toPhase, phasePath);
    }
    for (const { item, index } of model.innerLoops) {
      const toLoop = asString(item.loop_id);
      if (toLoop !== undefined) addSystemRef(system, entry, "inner_loop", ["nesting", "inner_loops", index, "loop_id"], toLoop);
    }
    const parent = asString(model.nesting?.parent_loop);
    if (parent !== undefined) addSystemRef(system, entry, "parent_loop", ["nesting", "parent_loop"], parent);
    for (const { cadence, path } of model.cadences) {
      if (cadence.type !== "cross_loop_signal") continue;
      const params = asObject(cadence.params);
      const fromLoop = asString(params?.from_loop);
      if (fromLoop === undefined) continue;
      const fromPhase = asString(params?.from_phase);
      const phasePath = fromPhase === undefined ? undefined : childPath(path, "params", "from_phase");
      addSystemRef(system, entry, "signal_source", childPath(path, "params", "from_loop"), fromLoop, fromPhase, phasePath);
    }
  }
  return system;
}

function addSystemRef(system: ResolvedSystem, entry: LoopEntry, role: SystemRefRole, path: Path, toLoop: string, toPhase?: string, phasePath?: Path): void {
  const target = system.byLoopId.get(toLoop)?.[0];
  let status: SystemRef["status"] = "external";
  let suggestion: string | undefined;
  if (target) {
    status = toPhase === undefined || target.model.phaseIndex.has(toPhase) ? "resolved" : "missing-phase";
    if (status === "missing-phase") suggestion = closest(toPhase as string, target.model.phaseIndex.keys());
  }
  // One object shape for every reference, so code reading them stays monomorphic.
  system.refs.push({ role, file: entry.file, path, fromLoop: entry.model.loopId as string, toLoop, toPhase, phasePath, status, target, suggestion });
}

/** Nesting edges parent → inner, from both `inner_loops` and `parent_loop`, with cycles found by DFS. */
export function nestingCycles(system: ResolvedSystem): string[][] {
  // A cycle through other loops needs at least two nesting edges.
  let nestingRefs = 0;
  for (const r of system.refs) if (r.role === "inner_loop" || r.role === "parent_loop") nestingRefs++;
  if (nestingRefs < 2) return [];
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
