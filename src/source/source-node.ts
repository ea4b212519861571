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

export function pointerSegments(pointer: string): string[] {
  if (pointer === "") return [];
  const segments = pointer.slice(1).split("/");
  if (!pointer.includes("~")) return segments;
  return segments.map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
}

export function toPointer(segments: readonly (string | number)[]): string {
  return segments.map((s) => "/" + String(s).replace(/~/g, "~0").replace(/\//g, "~1")).join("");
}

/** The deepest node on the pointer's path, and whether the whole path resolved. */
export function walk(root: SourceNode, pointer: string): { node: SourceNode; resolved: boolean } {
  let node = root;
  const escaped = pointer.includes("~");
  for (let at = 1; at <= pointer.length && pointer !== ""; ) {
    let end = pointer.indexOf("/", at);
    if (end < 0) end = pointer.length;
    let next: SourceNode | undefined;
    if (node.kind === "array") {
      // Indices are read in place: no substring to allocate and hash.
      const index = indexAt(pointer, at, end);
      if (index >= 0) next = node.items?.[index];
    } else if (node.kind === "object") {
      let seg = pointer.slice(at, end);
      if (escaped) seg = seg.replace(/~1/g, "/").replace(/~0/g, "~");
      next = node.entries?.get(seg);
    }
    if (!next) return { node, resolved: false };
    node = next;
    at = end + 1;
  }
  return { node, resolved: true };
}

/** The array index spelt by pointer[start, end), or -1 (RFC 6901: digits, no leading zero). */
function indexAt(pointer: string, start: number, end: number): number {
  if (end === start || end - start > 9 || (end - start > 1 && pointer.charCodeAt(start) === 48)) return -1;
  let n = 0;
  for (let i = start; i < end; i++) {
    const c = pointer.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return -1;
    n = n * 10 + c;
  }
  return n;
}

/**
 * The span to underline for a pointer: the key when `preferKey` (unknown or misspelt keys), else
 * the value. A pointer that does not fully resolve lands on the deepest node that exists.
 */
export function spanOf(root: SourceNode, pointer: string, preferKey = false): Span {
  const { node, resolved } = walk(root, pointer);
  if ((preferKey || !resolved) && node.keyStart !== undefined && node.keyEnd !== undefined) {
    return { start: node.keyStart, end: node.keyEnd };
  }
  if (!resolved || node.kind !== "scalar") {
    // A whole object spans many lines: underline its first character only.
    return { start: node.start, end: Math.min(node.end, node.start + 1) };
  }
  return { start: node.start, end: node.end };
}
