/**
 * The diagram's graph model: what `pulse-diagram --format json` prints and what every emitter
 * (Mermaid, DOT, SVG, HTML) draws. Its shape is a public contract documented in
 * docs/diagrams.md; a change that removes or renames a field bumps DIAGRAM_MODEL_VERSION.
 *
 * Ids are prefixed by what they name (`loop:`, `phase:`, `cadence:`, `substrate:`, `inner:`,
 * `external:`, `missing:`) and are built from manifest text, so emitters never print them:
 * they map them to n0, n1, … first.
 */

export const DIAGRAM_MODEL_VERSION = 1;

export const LAYOUTS = ["lr", "tb", "ring"] as const;
export const SUBSTRATE_MODES = ["none", "referenced", "all"] as const;
export const EDGE_KINDS = ["sequence", "route", "closure", "cadence", "nesting", "connection", "substrate"] as const;
export const NODE_KINDS = ["phase", "cadence", "substrate", "inner_loop", "external_loop", "missing"] as const;

export const DIAGRAM_FORMATS = ["mermaid", "dot", "svg", "html", "json"] as const;

/** `-o` extensions and the format each one implies. */
export const EXTENSION_FORMATS: Readonly<Record<string, DiagramFormat>> = {
  ".mmd": "mermaid",
  ".mermaid": "mermaid",
  ".dot": "dot",
  ".gv": "dot",
  ".svg": "svg",
  ".html": "html",
  ".htm": "html",
  ".json": "json",
};

export type DiagramFormat = (typeof DIAGRAM_FORMATS)[number];
export type Layout = (typeof LAYOUTS)[number];
export type SubstrateMode = (typeof SUBSTRATE_MODES)[number];
export type EdgeKind = (typeof EDGE_KINDS)[number];
export type NodeKind = (typeof NODE_KINDS)[number];

export interface DiagramGraph {
  model: "pulse-diagram";
  version: typeof DIAGRAM_MODEL_VERSION;
  options: { substrates: SubstrateMode; depth: number | null };
  loops: DiagramLoop[];
  nodes: DiagramNode[];
  edges: DiagramEdge[];
}

export interface DiagramLoop {
  /** `loop:<loop_id>`; edges may start or end at a loop (drawn as its cluster). */
  id: string;
  /** The cluster title: loop id, then loop name (normalised like node labels). */
  label: string;
  loopId: string;
  name: string | null;
  version: string | null;
  file: string;
  /** The loop whose cluster encloses this one (from the parent's `inner_loops`), or null. */
  parent: string | null;
  /** 0 for loops nobody loaded nests; inner loops count up from their parent. */
  depth: number;
  /** Deeper than --depth: drawn as one placeholder node inside its parent instead of a cluster. */
  collapsed: boolean;
  /** Node of phases[0], where the first iteration starts (null when collapsed or phaseless). */
  entry: string | null;
  /** The cadence, then each fallback, as printed in the trigger node. */
  cadence: { type: string; label: string }[];
  /** The seven §7 invariants in spec order; an absent one is not enforced. */
  invariants: { name: string; enabled: boolean }[];
  substrates: { slot: string; uri: string | null }[];
}

/** Fields named `loop` hold loop ids (`loop:<loop_id>`); fields named `target` hold a loop_id as written. */
interface NodeBase {
  id: string;
  /** Lines separated by "\n"; manifest text is whitespace-normalised, so "\n" is always ours. */
  label: string;
  /** The loop whose cluster holds the node; null for nodes shared between loops. */
  loop: string | null;
}

export interface PhaseNode extends NodeBase {
  kind: "phase";
  phase: string;
  index: number;
  phaseKind: string;
  customKind: string | null;
  description: string | null;
}

export interface CadenceNode extends NodeBase {
  kind: "cadence";
}

export interface SubstrateNode extends NodeBase {
  kind: "substrate";
  uri: string;
  /** Which loops bind this URI, in which slot (`loop` is a loop id, `loop:<loop_id>`). */
  bindings: { loop: string; slot: string }[];
}

/** An inner loop drawn as a dashed placeholder: its manifest was not given, or it is collapsed. */
export interface InnerLoopNode extends NodeBase {
  kind: "inner_loop";
  target: string;
  trigger: string | null;
  wait: string | null;
  collapsed: boolean;
}

/** A connection or signal source in a loop whose manifest was not given. */
export interface ExternalLoopNode extends NodeBase {
  kind: "external_loop";
  target: string;
  phase: string | null;
}

/** Where a reference to a phase that does not exist points: drawn as "phase not found". */
export interface MissingNode extends NodeBase {
  kind: "missing";
  target: string;
  phase: string;
}

export type DiagramNode = PhaseNode | CadenceNode | SubstrateNode | InnerLoopNode | ExternalLoopNode | MissingNode;

/** A reference the resolver could not resolve, at the place the validator reports it. */
export interface Unresolved {
  file: string;
  pointer: string;
  /** loop_id of the loop that lacks the phase. */
  target: string;
  phase: string;
}

export interface ConnectionInfo {
  id: string | null;
  token: string | null;
  delivery: string;
  cadence: string | null;
  condition: string | null;
}

export interface DiagramEdge {
  kind: EdgeKind;
  from: string;
  to: string;
  label: string | null;
  /** True when the edge draws an unresolved reference: that end is a "phase not found" node. */
  dangling: boolean;
  /** Where the manifest declares this edge (absent for sequence edges, which array order implies). */
  source?: { file: string; pointer: string };
  /** Present when dangling: every unresolved reference this edge draws. */
  unresolved?: Unresolved[];
  /** Present on connection edges. */
  connection?: ConnectionInfo;
}

export interface GraphOptions {
  substrates?: SubstrateMode;
  /** Collapse inner loops nested deeper than this (0: only the outermost loops are drawn). */
  depth?: number;
}

export interface DiagramInput {
  file: string;
  manifest: unknown;
}
