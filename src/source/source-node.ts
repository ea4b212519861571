/**
 * A parsed document as positions: every object, array and scalar with the span of its value
 * and, inside an object, the span of the key that names it. JSON and YAML both build this
 * tree, so diagnostics point at the same place whatever the input format.
 */
export interface SourceNode {
  kind: "object" | "array" | "scalar";
  start: number;
  end: number;
  keyStart?: number;
  keyEnd?: number;
  entries?: Map<string, SourceNode>;
  items?: SourceNode[];
}

export interface Span {
  start: number;
  end: number;
}

/**
 * A place in a document as its segments: object keys and array indices. Code that knows where
 * it is builds a path rather than a JSON pointer: walking it needs no parsing, and its keys are
 * the program's own constant strings, whose hashes V8 has already computed.
 */
export type Path = readonly (string | number)[];

/** `path` and then one or two more segments, as a new path (array spread and concat are slow in V8). */
export function childPath(path: Path, segment: string | number, next?: string | number): Path {
  const out = path.slice();
  out.push(segment);
  if (next !== undefined) out.push(next);
  return out;
}

export function pointerSegments(pointer: string): string[] {
  if (pointer === "") return [];
  const segments = pointer.slice(1).split("/");
  if (!pointer.includes("~")) return segments;
  return segments.map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
}

export function toPointer(path: Path): string {
  let out = "";
  for (let i = 0; i < path.length; i++) {
    const s = path[i] as string | number;
    out += "/";
    out += typeof s === "number" ? String(s) : s.includes("~") || s.includes("/") ? s.replace(/~/g, "~0").replace(/\//g, "~1") : s;
  }
  return out;
}

/** The deepest node on the path (a JSON pointer or its segments), and whether the whole path resolved. */
export function walk(root: SourceNode, at: string | Path): { node: SourceNode; resolved: boolean } {
  const path = typeof at === "string" ? pointerSegments(at) : at;
  let node = root;
  for (let i = 0; i < path.length; i++) {
    const seg = path[i] as string | number;
    let next: SourceNode | undefined;
    if (node.kind === "array") {
      const index = typeof seg === "number" ? seg : arrayIndex(seg);
      if (index >= 0) next = node.items?.[index];
    } else if (node.kind === "object") {
      next = node.entries?.get(typeof seg === "number" ? String(seg) : seg);
    }
    if (!next) return { node, resolved: false };
    node = next;
  }
  return { node, resolved: true };
}

/** The array index a pointer segment spells, or -1 (RFC 6901: digits, no leading zero). */
function arrayIndex(seg: string): number {
  if (seg === "" || seg.length > 9 || (seg.length > 1 && seg.charCodeAt(0) === 48)) return -1;
  let n = 0;
  for (let i = 0; i < seg.length; i++) {
    const c = seg.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return -1;
    n = n * 10 + c;
  }
  return n;
}

/**
 * The span to underline for a path or pointer: the key when `preferKey` (unknown or misspelt keys), else
 * the value. A path that does not fully resolve lands on the deepest node that exists.
 */
export function spanOf(root: SourceNode, at: string | Path, preferKey = false): Span {
  const { node, resolved } = walk(root, at);
  if ((preferKey || !resolved) && node.keyStart !== undefined && node.keyEnd !== undefined) {
    return { start: node.keyStart, end: node.keyEnd };
  }
  if (!resolved || node.kind !== "scalar") {
    // A whole object spans many lines: underline its first character only.
    return { start: node.start, end: Math.min(node.end, node.start + 1) };
  }
  return { start: node.start, end: node.end };
}
