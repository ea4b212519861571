/**
 * One graph model from one or many manifests. References are resolved by the validator's own
 * resolver (resolveLoop, resolveSystem), so every reference pulse-validate reports as unresolved
 * is a dangling edge here, at the same file and pointer, and nothing else is.
 *
 * Works on any parsed document (an invalid manifest yields a partial graph, never an exception);
 * the CLI refuses invalid manifests before drawing them.
 */
import { parseExpressionCached as parseExpression } from "../grammar/cached.js";
import { printExpression } from "../grammar/expression/index.js";
import { INVARIANT_NAMES, SUBSTRATE_SLOTS } from "../manifest/types.js";
import { asObject, field, str } from "../validator/access.js";
import { resolveLoop, resolveSystem, type LoopEntry, type SystemRef } from "../validator/resolver.js";
import { toPointer } from "../source/source-node.js";
import { cadenceText, clean, closureLabel, connectionLabel, deliveryOf, kindText, loopTitle, nestingLabel, shown, waitText } from "./labels.js";
import { LoopTree } from "./loop-tree.js";
import type { DiagramEdge, DiagramGraph, DiagramInput, DiagramLoop, DiagramNode, GraphOptions, Unresolved } from "./model.js";
import { DIAGRAM_MODEL_VERSION } from "./model.js";

/** An end of an edge, and the unresolved reference that end stands for, if any. */
interface End {
  node: string;
  unresolved?: Unresolved;
}

class GraphBuilder {
  readonly nodes = new Map<string, DiagramNode>();
  readonly edges: DiagramEdge[] = [];
  private readonly edgeIndex = new Map<string, DiagramEdge>();

  addNode(node: DiagramNode): string {
    if (!this.nodes.has(node.id)) this.nodes.set(node.id, node);
    return node.id;
  }

  hasEdge(kind: DiagramEdge["kind"], from: string, to: string): boolean {
    return this.edges.some((e) => e.kind === kind && e.from === from && e.to === to);
  }

  /** Equal edges (same kind, ends and label) are drawn once, with their unresolved references merged. */
  addEdge(kind: DiagramEdge["kind"], from: End, to: End, label: string | null, extra: Partial<DiagramEdge> = {}): void {
    const unresolved = [from.unresolved, to.unresolved].filter((u): u is Unresolved => u !== undefined);
    const key = `${kind}\u0000${from.node}\u0000${to.node}\u0000${label ?? ""}`;
    const existing = this.edgeIndex.get(key);
    if (existing) {
      if (unresolved.length) existing.unresolved = [...(existing.unresolved ?? []), ...unresolved];
      existing.dangling = existing.dangling || unresolved.length > 0;
      return;
    }
    const edge: DiagramEdge = { kind, from: from.node, to: to.node, label, dangling: unresolved.length > 0, ...extra };
    if (unresolved.length) edge.unresolved = unresolved;
    this.edgeIndex.set(key, edge);
    this.edges.push(edge);
  }
}

export function buildGraph(inputs: readonly DiagramInput[], options: GraphOptions = {}): DiagramGraph {
  const substrates = options.substrates ?? "referenced";
  const maxDepth = options.depth ?? Number.POSITIVE_INFINITY;
  const entries: LoopEntry[] = [];
  for (const input of inputs) {
    const manifest = asObject(input.manifest);
    if (manifest) entries.push({ file: input.file, manifest, model: resolveLoop(manifest) });
  }
  const system = resolveSystem(entries);
  const tree = new LoopTree(entries, system, maxDepth);
  const g = new GraphBuilder();
  const ctx: Context = { g, tree, refs: indexRefs(system.refs), substrates };

  for (const entry of tree.preorder()) if (tree.isDrawn(entry)) drawLoop(ctx, entry);
  for (const entry of entries) {
    drawConnections(ctx, entry);
    drawSignalSources(ctx, entry);
  }

  return {
    model: "pulse-diagram",
    version: DIAGRAM_MODEL_VERSION,
    options: { substrates, depth: Number.isFinite(maxDepth) ? maxDepth : null },
    loops: tree.preorder().map((entry) => describeLoop(tree, entry)),
    nodes: [...g.nodes.values()],
    edges: g.edges,
  };
}

interface Context {
  g: GraphBuilder;
  tree: LoopTree;
  refs: Map<string, SystemRef>;
  substrates: "none" | "referenced" | "all";
}

function indexRefs(refs: readonly SystemRef[]): Map<string, SystemRef> {
  return new Map(refs.map((r) => [`${r.file}\u0000${toPointer(r.path)}`, r]));
}

function describeLoop(tree: LoopTree, entry: LoopEntry): DiagramLoop {
  const { manifest, model } = entry;
  const parent = tree.parentOf(entry);
  const drawn = tree.isDrawn(entry);
  const first = model.phases[0];
  const invariants = asObject(field(manifest, "invariants"));
  const slots = asObject(field(manifest, "substrates"));
  return {
    id: tree.loopNode(entry),
    label: loopTitle(tree.key(entry), str(manifest, "loop_name")),
    loopId: tree.key(entry),
    name: str(manifest, "loop_name") ?? null,
    version: str(manifest, "version") ?? null,
    file: entry.file,
    parent: parent ? tree.loopNode(parent) : null,
    depth: tree.depthOf(entry),
    collapsed: !drawn,
    entry: drawn && first ? tree.phaseNode(entry, first.index) : null,
    cadence: model.cadences.map(({ cadence }) => ({ type: str(cadence, "type") ?? "", label: cadenceText(cadence) })),
    invariants: INVARIANT_NAMES.map((key) => ({ name: key, enabled: field(invariants, key) === true })),
    substrates: SUBSTRATE_SLOTS.map((key) => ({ slot: key, uri: str(slots, key) ?? null })),
  };
}

/** A phase of a loop by id: its node, the loop's placeholder when collapsed, or "phase not found". */
function phaseEnd(ctx: Context, entry: LoopEntry, phase: string, pointer: string): End {
  const { tree, g } = ctx;
  if (!tree.isDrawn(entry)) {
    if (entry.model.phaseIndex.has(phase)) return { node: tree.representative(entry) };
  } else {
    const index = entry.model.phaseIndex.get(phase);
    if (index !== undefined) return { node: tree.phaseNode(entry, index) };
  }
  const loopId = tree.key(entry);
  const node = g.addNode({
    id: `missing:${loopId}/${phase}`,
    kind: "missing",
    label: tree.isDrawn(entry) ? `phase not found\n${shown(phase)}` : `phase not found\n${shown(loopId)}/${shown(phase)}`,
    loop: tree.isDrawn(entry) ? tree.loopNode(entry) : null,
    target: loopId,
    phase,
  });
  return { node, unresolved: { file: entry.file, pointer, target: loopId, phase } };
}

function drawLoop(ctx: Context, entry: LoopEntry): void {
  const { g, tree } = ctx;
  const { model } = entry;
  const loop = tree.loopNode(entry);
  const cadenceLines = model.cadences.map(({ cadence }, i) => (i === 0 ? "" : "fallback: ") + cadenceText(cadence));
  const cadence = g.addNode({ id: tree.cadenceNode(entry), kind: "cadence", label: cadenceLines.join("\n") || "no cadence", loop });

  for (const { item, index, id, kind } of model.phases) {
    g.addNode({
      id: tree.phaseNode(entry, index),
      kind: "phase",
      label: `${clean(id) || `phases[${index}]`}\n${kindText(kind, str(item, "custom_kind"))}`,
      loop,
      phase: id ?? "",
      index,
      phaseKind: kind ?? "",
      customKind: kind === "custom" ? (str(item, "custom_kind") ?? null) : null,
      description: clean(str(item, "description"), 400) || null,
    });
  }
  const first = model.phases[0];
  if (first) g.addEdge("cadence", { node: cadence }, { node: tree.phaseNode(entry, first.index) }, null, { source: { file: entry.file, pointer: "/cadence" } });
  for (let i = 1; i < model.phases.length; i++) {
    const a = model.phases[i - 1]!;
    const b = model.phases[i]!;
    g.addEdge("sequence", { node: tree.phaseNode(entry, a.index) }, { node: tree.phaseNode(entry, b.index) }, null);
  }

  drawRoutes(ctx, entry);
  drawNesting(ctx, entry);
  if (ctx.substrates !== "none") drawSubstrates(ctx, entry);

  const closure = model.closure;
  const from = str(closure, "from_phase");
  const to = str(closure, "to_phase");
  if (from !== undefined && to !== undefined) {
    const label = closureLabel(str(closure, "via"), str(closure, "guarantee"));
    g.addEdge("closure", phaseEnd(ctx, entry, from, "/closure/from_phase"), phaseEnd(ctx, entry, to, "/closure/to_phase"), label, {
      source: { file: entry.file, pointer: "/closure" },
    });
  }
}

const ENDPOINT_POINTER = /^\/phases\/(\d+)\/(inputs\/from|outputs\/to)$/;

/** Where an endpoint's data flows, relative to the phase that declares it. */
function endpointOwner(ctx: Context, entry: LoopEntry, pointer: string): { node: End; incoming: boolean } | undefined {
  const m = ENDPOINT_POINTER.exec(pointer);
  if (m) return { node: { node: ctx.tree.phaseNode(entry, Number(m[1])) }, incoming: m[2] === "inputs/from" };
  if (pointer === "/closure/via") {
    // The closure carries from_phase's outcome through `via`; the closure edge itself draws an
    // unknown from_phase, so here the loop stands in for it.
    const from = str(entry.model.closure, "from_phase");
    const index = from === undefined ? undefined : entry.model.phaseIndex.get(from);
    return { node: { node: index === undefined ? ctx.tree.loopNode(entry) : ctx.tree.phaseNode(entry, index) }, incoming: false };
  }
  return undefined;
}

function drawRoutes(ctx: Context, entry: LoopEntry): void {
  for (const { path, refs } of entry.model.endpoints) {
    const pointer = toPointer(path);
    for (const ref of refs) {
      if (ref.kind !== "phase") continue;
      const owner = endpointOwner(ctx, entry, pointer);
      if (!owner) continue;
      const other = phaseEnd(ctx, entry, ref.phase, pointer);
      const [from, to] = owner.incoming ? [other, owner.node] : [owner.node, other];
      if (!other.unresolved && ctx.g.hasEdge("sequence", from.node, to.node)) continue;
      ctx.g.addEdge("route", from, to, null, { source: { file: entry.file, pointer } });
    }
  }
}

function drawNesting(ctx: Context, entry: LoopEntry): void {
  const { g, tree } = ctx;
  const triggers = new Map(entry.model.triggers.map((t) => [toPointer(t.path), t]));
  for (const { item, index } of entry.model.innerLoops) {
    const target = str(item, "loop_id") ?? "(no loop_id)";
    const pointer = `/nesting/inner_loops/${index}/trigger`;
    const trigger = triggers.get(pointer);
    const wait = str(item, "wait");
    const loaded = tree.byLoopId(target);
    let to: string;
    let label: string | null = null;
    if (loaded && tree.isDrawn(loaded)) {
      to = tree.loopNode(loaded);
      label = nestingLabel(trigger?.condition, wait, field(item, "timeout_ms"));
    } else if (loaded && tree.parentOf(loaded) !== entry) {
      to = tree.representative(loaded);
    } else {
      to = g.addNode({
        id: tree.placeholderNode(entry, target),
        kind: "inner_loop",
        label: placeholderLabel(target, loaded ? `inner loop, collapsed: ${loaded.model.phases.length} phases` : "inner loop, not loaded", str(item, "trigger"), waitText(wait, field(item, "timeout_ms"))),
        loop: tree.loopNode(entry),
        target,
        trigger: str(item, "trigger") ?? null,
        wait: wait ?? null,
        collapsed: loaded !== undefined,
      });
    }
    if (!trigger) continue;
    g.addEdge("nesting", phaseEnd(ctx, entry, trigger.phase, pointer), { node: to }, label, { source: { file: entry.file, pointer: `/nesting/inner_loops/${index}` } });
  }
}

function placeholderLabel(loopId: string, status: string, trigger: string | undefined, wait: string | null): string {
  const lines = [shown(loopId), status];
  if (trigger !== undefined) lines.push(`trigger: ${clean(trigger)}`);
  if (wait) lines.push(`wait: ${wait}`);
  return lines.join("\n");
}

function drawSubstrates(ctx: Context, entry: LoopEntry): void {
  const { g, tree } = ctx;
  const slots = asObject(field(entry.manifest, "substrates"));
  const loopId = tree.loopNode(entry);
  const bound = new Map<string, string>();
  for (const key of SUBSTRATE_SLOTS) {
    const uri = str(slots, key);
    if (uri !== undefined && uri.trim() !== "") bound.set(key, uri);
  }
  const used = new Set<string>();
  const node = (slot: string, uri: string): string => {
    const id = `substrate:${uri}`;
    const existing = g.nodes.get(id);
    if (existing?.kind === "substrate") {
      if (!existing.bindings.some((b) => b.loop === loopId && b.slot === slot)) existing.bindings.push({ loop: loopId, slot });
      existing.label = substrateLabel(existing.uri, existing.bindings);
      return id;
    }
    const bindings = [{ loop: loopId, slot }];
    return g.addNode({ id, kind: "substrate", label: substrateLabel(uri, bindings), loop: null, uri, bindings });
  };
  for (const { path, refs } of entry.model.endpoints) {
    const pointer = toPointer(path);
    for (const ref of refs) {
      if (ref.kind !== "substrate") continue;
      const uri = bound.get(ref.slot);
      const owner = endpointOwner(ctx, entry, pointer);
      if (uri === undefined || !owner) continue;
      used.add(ref.slot);
      const store = { node: node(ref.slot, uri) };
      const [from, to] = owner.incoming ? [store, owner.node] : [owner.node, store];
      g.addEdge("substrate", from, to, null, { source: { file: entry.file, pointer } });
    }
  }
  if (ctx.substrates !== "all") return;
  for (const [slot, uri] of bound) {
    if (used.has(slot)) continue;
    g.addEdge("substrate", { node: tree.loopNode(entry) }, { node: node(slot, uri) }, slot, { source: { file: entry.file, pointer: `/substrates/${slot}` } });
  }
}

function substrateLabel(uri: string, bindings: readonly { slot: string }[]): string {
  return `${shown(uri)}\n${[...new Set(bindings.map((b) => b.slot))].join(", ")}`;
}

/** A loop that was not loaded: an unloaded inner-loop placeholder if one is drawn, else an external box. */
function outsideEnd(ctx: Context, loopId: string, phase: string | undefined): End {
  const placeholder = ctx.tree.unloadedPlaceholder(loopId, ctx.g.nodes);
  if (placeholder) return { node: placeholder };
  const node = ctx.g.addNode({
    id: `external:${loopId}/${phase ?? ""}`,
    kind: "external_loop",
    label: [shown(loopId), ...(phase === undefined ? [] : [shown(phase)]), "not loaded"].join("\n"),
    loop: null,
    target: loopId,
    phase: phase ?? null,
  });
  return { node };
}

/** The far end of a cross-loop reference, by the resolver's verdict. */
function systemEnd(ctx: Context, ref: SystemRef, whole: (target: LoopEntry) => string): End {
  if (ref.status === "external" || !ref.target) return outsideEnd(ctx, ref.toLoop, ref.toPhase);
  if (ref.toPhase === undefined) return { node: ctx.tree.isDrawn(ref.target) ? whole(ref.target) : ctx.tree.representative(ref.target) };
  const end = phaseEnd(ctx, ref.target, ref.toPhase, toPointer(ref.phasePath ?? ref.path));
  // The reference is written in the referring manifest: report it there, as the validator does.
  if (end.unresolved) end.unresolved = { ...end.unresolved, file: ref.file };
  return end;
}

function drawConnections(ctx: Context, entry: LoopEntry): void {
  const { tree, g } = ctx;
  for (const { item, index } of entry.model.connections) {
    const emit = str(item, "emit_phase");
    if (emit === undefined) continue;
    const ref = ctx.refs.get(`${entry.file}\u0000/connections/${index}/to_loop`);
    const from = tree.isDrawn(entry) ? phaseEnd(ctx, entry, emit, `/connections/${index}/emit_phase`) : { node: tree.representative(entry) };
    // A connection without to_phase becomes the target loop's trigger (§3.5). Without a system
    // reference (no loop_id or to_loop: a schema error) the target is drawn as written.
    const to = ref ? systemEnd(ctx, ref, (target) => tree.cadenceNode(target)) : outsideEnd(ctx, str(item, "to_loop") ?? "(no to_loop)", str(item, "to_phase"));
    if (from.node === to.node && g.nodes.get(from.node)?.kind === "inner_loop") continue;
    const condition = str(item, "emit_condition");
    g.addEdge("connection", from, to, connectionLabel(item), {
      source: { file: entry.file, pointer: `/connections/${index}` },
      connection: {
        id: str(item, "id") ?? null,
        token: str(item, "token") ?? null,
        delivery: deliveryOf(item),
        cadence: str(item, "cadence") ?? null,
        condition: condition === undefined ? null : clean(conditionText(condition), 200),
      },
    });
  }
}

/** The canonical form when it parses; as written otherwise (the validator reports it then). */
function conditionText(condition: string): string {
  const parsed = parseExpression(condition);
  return parsed.ok ? printExpression(parsed.value) : condition;
}

function drawSignalSources(ctx: Context, entry: LoopEntry): void {
  const { tree, g } = ctx;
  for (const { cadence, path } of entry.model.cadences) {
    if (str(cadence, "type") !== "cross_loop_signal") continue;
    const pointer = toPointer(path);
    const ref = ctx.refs.get(`${entry.file}\u0000${pointer}/params/from_loop`);
    if (!ref) continue;
    const to = tree.isDrawn(entry) ? tree.cadenceNode(entry) : tree.representative(entry);
    const from = systemEnd(ctx, ref, (source) => tree.loopNode(source));
    if (from.node === to && g.nodes.get(to)?.kind === "inner_loop") continue;
    const token = clean(str(field(cadence, "params"), "token"));
    g.addEdge("cadence", from, { node: to }, token || null, { source: { file: entry.file, pointer } });
  }
}
