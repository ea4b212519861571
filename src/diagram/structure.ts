/**
 * What the Mermaid and DOT emitters share: safe ids (n0, n1, … for nodes, an index per drawn
 * loop) that never contain manifest text, and the nesting of clusters.
 */
import type { DiagramGraph, DiagramLoop, DiagramNode } from "./model.js";

export class Structure {
  private readonly nodeIds = new Map<string, string>();
  private readonly loopIndex = new Map<string, number>();
  private readonly nodesByLoop = new Map<string | null, DiagramNode[]>();
  private readonly childLoops = new Map<string | null, DiagramLoop[]>();

  constructor(readonly graph: DiagramGraph) {
    const drawn = graph.loops.filter((l) => !l.collapsed);
    drawn.forEach((loop, i) => this.loopIndex.set(loop.id, i));
    for (const loop of drawn) {
      const parent = loop.parent !== null && this.loopIndex.has(loop.parent) ? loop.parent : null;
      this.childLoops.set(parent, [...(this.childLoops.get(parent) ?? []), loop]);
    }
    graph.nodes.forEach((node, i) => {
      this.nodeIds.set(node.id, `n${i}`);
      const home = node.loop !== null && this.loopIndex.has(node.loop) ? node.loop : null;
      this.nodesByLoop.set(home, [...(this.nodesByLoop.get(home) ?? []), node]);
    });
  }

  /** Safe id of a node, or undefined for a loop or an unknown id. */
  node(id: string): string | undefined {
    return this.nodeIds.get(id);
  }

  isSubstrate(id: string): boolean {
    return this.graph.nodes.some((n) => n.id === id && n.kind === "substrate");
  }

  /** Index of a drawn loop (its cluster), or undefined. */
  loop(id: string): number | undefined {
    return this.loopIndex.get(id);
  }

  /** Loops drawn directly inside `parent` (null: at the top). */
  loopsIn(parent: string | null): DiagramLoop[] {
    return this.childLoops.get(parent) ?? [];
  }

  nodesIn(loop: string | null): DiagramNode[] {
    return this.nodesByLoop.get(loop) ?? [];
  }

  /** The node an edge to a whole loop attaches to: its entry phase, else its trigger. */
  anchorOf(loopId: string): string | undefined {
    const loop = this.graph.loops.find((l) => l.id === loopId);
    const inside = this.nodesIn(loopId);
    const anchor = loop?.entry ?? inside.find((n) => n.kind === "cadence")?.id ?? inside[0]?.id;
    return anchor === undefined ? undefined : this.node(anchor);
  }
}
