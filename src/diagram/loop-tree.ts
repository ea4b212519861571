/**
 * Which loop encloses which: a loaded loop is drawn inside the first loaded loop that lists it
 * in `inner_loops` (parent_loop alone does not move it: the validator flags the disagreement).
 * A link that would close a cycle is ignored, so the enclosure is always a forest. Loops deeper
 * than --depth are collapsed into one placeholder inside their deepest drawn ancestor.
 */
import { str } from "../validator/access.js";
import type { LoopEntry, ResolvedSystem } from "../validator/resolver.js";
import type { DiagramNode } from "./model.js";

export class LoopTree {
  private readonly keys = new Map<LoopEntry, string>();
  private readonly parents = new Map<LoopEntry, LoopEntry>();
  private readonly children = new Map<LoopEntry, LoopEntry[]>();
  private readonly depths = new Map<LoopEntry, number>();
  private readonly order: LoopEntry[] = [];
  private readonly phaseIds = new Map<LoopEntry, Map<number, string>>();

  constructor(
    entries: readonly LoopEntry[],
    private readonly system: ResolvedSystem,
    private readonly maxDepth: number,
  ) {
    const used = new Set<string>();
    for (const entry of entries) {
      const base = entry.model.loopId ?? entry.file;
      let key = base;
      for (let n = 2; used.has(key); n++) key = `${base}~${n}`;
      used.add(key);
      this.keys.set(entry, key);
    }
    for (const entry of entries) {
      for (const { item } of entry.model.innerLoops) {
        const child = this.byLoopId(str(item, "loop_id"));
        if (!child || this.parents.has(child) || this.encloses(child, entry)) continue;
        this.parents.set(child, entry);
        this.children.set(entry, [...(this.children.get(entry) ?? []), child]);
      }
    }
    const visit = (entry: LoopEntry, depth: number): void => {
      this.depths.set(entry, depth);
      this.order.push(entry);
      for (const child of this.children.get(entry) ?? []) visit(child, depth + 1);
    };
    for (const entry of entries) if (!this.parents.has(entry)) visit(entry, 0);
  }

  /** Whether `outer` is `inner` or one of its ancestors. */
  private encloses(outer: LoopEntry, inner: LoopEntry): boolean {
    for (let e: LoopEntry | undefined = inner; e; e = this.parents.get(e)) if (e === outer) return true;
    return false;
  }

  /** The loaded loop a loop id resolves to: the first manifest declaring it, as the resolver does. */
  byLoopId(loopId: string | undefined): LoopEntry | undefined {
    return loopId === undefined ? undefined : this.system.byLoopId.get(loopId)?.[0];
  }

  /** Outer loops first, each followed by its inner loops, in input order. */
  preorder(): LoopEntry[] {
    return this.order;
  }

  key(entry: LoopEntry): string {
    return this.keys.get(entry) ?? entry.file;
  }

  parentOf(entry: LoopEntry): LoopEntry | undefined {
    return this.parents.get(entry);
  }

  depthOf(entry: LoopEntry): number {
    return this.depths.get(entry) ?? 0;
  }

  isDrawn(entry: LoopEntry): boolean {
    return this.depthOf(entry) <= this.maxDepth;
  }

  loopNode(entry: LoopEntry): string {
    return `loop:${this.key(entry)}`;
  }

  cadenceNode(entry: LoopEntry): string {
    return `cadence:${this.key(entry)}`;
  }

  placeholderNode(parent: LoopEntry, innerLoopId: string): string {
    return `inner:${this.key(parent)}/${innerLoopId}`;
  }

  /** Phase node ids: by phase id, or by position for a duplicate or missing id. */
  phaseNode(entry: LoopEntry, index: number): string {
    let ids = this.phaseIds.get(entry);
    if (!ids) {
      ids = new Map();
      for (const phase of entry.model.phases) {
        const byId = phase.id !== undefined && entry.model.phaseIndex.get(phase.id) === phase.index;
        ids.set(phase.index, byId ? `phase:${this.key(entry)}/${phase.id}` : `phase:${this.key(entry)}/#${phase.index}`);
      }
      this.phaseIds.set(entry, ids);
    }
    return ids.get(index) ?? `phase:${this.key(entry)}/#${index}`;
  }

  /** What stands for a loop in the drawing: its cluster, or the placeholder it is collapsed into. */
  representative(entry: LoopEntry): string {
    if (this.isDrawn(entry)) return this.loopNode(entry);
    let outermost = entry;
    for (let p = this.parents.get(entry); p && !this.isDrawn(p); p = this.parents.get(p)) outermost = p;
    const parent = this.parents.get(outermost);
    return parent ? this.placeholderNode(parent, outermost.model.loopId ?? this.key(outermost)) : this.loopNode(entry);
  }

  /** The placeholder drawn for an inner loop whose manifest was not given, if any loop declares it. */
  unloadedPlaceholder(loopId: string, nodes: ReadonlyMap<string, DiagramNode>): string | undefined {
    for (const node of nodes.values()) if (node.kind === "inner_loop" && !node.collapsed && node.target === loopId) return node.id;
    return undefined;
  }
}
