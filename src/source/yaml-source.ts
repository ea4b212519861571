/**
 * YAML 1.2 with positions. The `yaml` package parses; we walk its node tree ourselves to build
 * both the plain value and the SourceNode tree in one pass, so the two never disagree, alias
 * expansion is bounded by a node budget (alias bombs), merge keys (`<<`) are honoured, and
 * keys like `__proto__` stay ordinary data.
 */
import { LineCounter, parseDocument, isAlias, isMap, isPair, isScalar, isSeq, type Document, type Node as YamlNode, type YAMLError } from "yaml";
import type { SourceNode } from "./source-node.js";
import type { ParsedSource, SourceProblem } from "./jsonc.js";
import { MAX_NESTING } from "./jsonc.js";
import { setOwn } from "./own-property.js";
import { intern } from "./intern.js";
import { LineIndex } from "./line-index.js";
import { excessiveYamlNesting } from "./yaml-depth.js";
import { findMisindentedLine } from "./yaml-indentation.js";

/** Nodes materialised after alias expansion; far above any real manifest, far below a bomb. */
export const MAX_EXPANDED_NODES = 100_000;

class Budget extends Error {}

export function parseYaml(text: string): ParsedSource {
  const deep = excessiveYamlNesting(text);
  if (deep >= 0) return { value: undefined, problems: [{ rule: "input/too-deep", message: `nesting deeper than ${MAX_NESTING} levels`, start: deep, end: deep + 1, severity: "error" }] };
  const doc = parseDocument(text, {
    lineCounter: new LineCounter(),
    merge: true,
    uniqueKeys: false,
    prettyErrors: false,
    strict: true,
    keepSourceTokens: false,
  });
  const problems = syntaxProblems(doc.errors, text);
  // A broken parse only yields cascades of schema errors: stop at the syntax errors.
  if (problems.length > 0) return { value: undefined, problems };
  for (const w of doc.warnings) {
    problems.push({ rule: "yaml/warning", message: cleanMessage(w.message), start: w.pos[0], end: Math.max(w.pos[1], w.pos[0] + 1), severity: "warning" });
  }
  if (doc.contents === null) {
    return { value: undefined, problems: [...problems, { rule: "input/empty", message: "the file has no content", start: 0, end: 0, severity: "error" }] };
  }
  const walker = new Walker(doc, problems);
  try {
    const { value, node } = walker.node(doc.contents as YamlNode, 0);
    return { value, root: node, problems, nonFinite: walker.nonFinite };
  } catch (e) {
    if (!(e instanceof Budget)) throw e;
    return { value: undefined, problems };
  }
}

/**
 * One syntax error, in words a user can act on, where the package reports several (a
 * mis-indented line yields a cascade, positioned at the line before, at column 1). Nesting deep
 * enough to exhaust the stack is "too deep"; a mis-indented line is named with the column it
 * should have; otherwise the package's first error, reworded where its own words mislead.
 */
function syntaxProblems(errors: readonly YAMLError[], text: string): SourceProblem[] {
  // Only nesting recurses in the composer, and far past MAX_NESTING before the stack runs out.
  // The composer gave up on that subtree, so any other error is a cascade: report this alone.
  const exhausted = errors.find((e) => e.code === "RESOURCE_EXHAUSTION");
  if (exhausted) {
    const at = exhausted.pos[0];
    return [{ rule: "input/too-deep", message: `nesting deeper than ${MAX_NESTING} levels`, start: at, end: at + 1, severity: "error" }];
  }
  if (errors.length === 0) return [];
  const first = [...errors].sort((a, b) => a.pos[0] - b.pos[0])[0] as YAMLError;
  const [start, end] = first.pos;
  if (first.code === "MULTIPLE_DOCS") return [secondDocument(text, start, end)];
  const lines = new LineIndex(text);
  const misindented = first.code === "TAB_AS_INDENT" ? undefined : findMisindentedLine(text);
  // The package notices a mis-indented line at or a few lines after it (a blank line between).
  if (misindented && lines.position(misindented.start).line <= lines.position(start).line + 3) {
    return [{ rule: "yaml/syntax", message: misindented.message, start: misindented.start, end: misindented.end, severity: "error" }];
  }
  const { message, at } = reworded(first, text, lines);
  return [{ rule: "yaml/syntax", message, start: at?.[0] ?? start, end: at?.[1] ?? Math.max(end, start + 1), severity: "error" }];
}

/** The package's message for the codes users meet most, in words that say what to change. */
function reworded(e: YAMLError, text: string, lines: LineIndex): { message: string; at?: [number, number] } {
  const { line } = lines.position(e.pos[0]);
  const raw = e.message.split("\n")[0] ?? e.message;
  switch (e.code) {
    case "TAB_AS_INDENT":
      return { message: `line ${line} is indented with a tab: YAML indentation is spaces only` };
    case "MISSING_CHAR":
      if (/quote/i.test(raw)) {
        const open = lastQuoteBefore(text, e.pos[0]);
        return open < 0 ? { message: "a quoted string is never closed: add the closing quote" } : { message: `this quoted string is never closed: add the closing ${text[open]}`, at: [open, open + 1] };
      }
      break;
    case "BAD_INDENT":
      if (/^Flow (sequence|mapping)/.test(raw)) {
        const bracket = /sequence/.test(raw) ? "[" : "{";
        const open = text.lastIndexOf(bracket, e.pos[0]);
        const close = bracket === "[" ? "]" : "}";
        return { message: `this ${bracket === "[" ? "list" : "mapping"} is never closed: end it with "${close}", and indent its continuation lines deeper than its key`, ...(open < 0 ? {} : { at: [open, open + 1] as [number, number] }) };
      }
      break;
    case "BLOCK_AS_IMPLICIT_KEY":
      return { message: `a value on the same line as its key cannot be another "key: value": put it on its own line, indented under the key, or quote it` };
    case "BAD_SCALAR_START": {
      const c = /character (.)/.exec(raw)?.[1];
      return { message: `a plain value cannot start with ${c ?? "this character"}: quote the value` };
    }
  }
  return { message: cleanMessage(raw) };
}

/** Where the unclosed quote before `at` opens: the last quote character at the start of a value. */
function lastQuoteBefore(text: string, at: number): number {
  for (let i = Math.min(at, text.length - 1); i >= 0; i--) {
    const c = text[i];
    if ((c === '"' || c === "'") && (i === 0 || /[\s[{,:]/.test(text[i - 1] as string))) return i;
  }
  return -1;
}

/** The package points at the second document: its `---` marker, or its content after a `...`. */
function secondDocument(text: string, start: number, end: number): SourceProblem {
  const { line } = new LineIndex(text).position(start);
  const marked = text.startsWith("---", start);
  const message = `a manifest is one YAML document, but a second one starts at line ${line}${marked ? ` with "---"` : ` after "..."`}`;
  return { rule: "yaml/syntax", message, start, end: marked ? start + 3 : Math.max(end, start + 1), severity: "error" };
}

function cleanMessage(message: string): string {
  // The package appends " at line N, column M:" and a code frame; we print our own positions.
  const first = message.split("\n")[0] ?? message;
  return first.replace(/ at line \d+, column \d+:?$/, "").replace(/^./, (c) => c.toLowerCase());
}

class Walker {
  /** Set when a scalar is ±Infinity or NaN (see ParsedSource.nonFinite). */
  nonFinite = false;
  private expanded = 0;
  private readonly resolving = new Set<YamlNode>();
  // Alias.resolve() searches the whole document; an expanded alias is resolved many times.
  private readonly aliasTargets = new Map<YamlNode, YamlNode | undefined>();

  constructor(
    private readonly doc: Document,
    private readonly problems: SourceProblem[],
  ) {}

  private fail(rule: string, message: string, start: number, end: number): never {
    this.problems.push({ rule, message, start, end, severity: "error" });
    throw new Budget(message);
  }

  node(n: YamlNode, depth: number, aliasSpan?: [number, number]): { value: unknown; node: SourceNode } {
    const [start, end] = aliasSpan ?? [n.range?.[0] ?? 0, n.range?.[1] ?? 0];
    if (++this.expanded > MAX_EXPANDED_NODES) {
      this.fail("input/too-complex", `the document expands to more than ${MAX_EXPANDED_NODES} nodes (alias expansion bomb?)`, start, end);
    }
    if (depth > MAX_NESTING) this.fail("input/too-deep", `nesting deeper than ${MAX_NESTING} levels`, start, end);

    if (isAlias(n)) {
      if (!this.aliasTargets.has(n)) this.aliasTargets.set(n, n.resolve(this.doc) as YamlNode | undefined);
      const target = this.aliasTargets.get(n);
      if (!target) this.fail("yaml/syntax", `unknown alias *${n.source}`, start, end);
      if (this.resolving.has(target)) this.fail("yaml/recursive-alias", `alias *${n.source} refers to a node that contains it`, start, end);
      this.resolving.add(target);
      try {
        return this.node(target, depth + 1, [start, end]);
      } finally {
        this.resolving.delete(target);
      }
    }
    if (isScalar(n)) return { value: this.scalar(n.value, start, end), node: { kind: "scalar", start, end } };
    if (isSeq(n)) {
      const value: unknown[] = [];
      const items: SourceNode[] = [];
      for (const item of n.items) {
        const child = this.node(item as YamlNode, depth + 1);
        value.push(child.value);
        items.push(child.node);
      }
      return { value, node: { kind: "array", start, end, items } };
    }
    if (isMap(n)) {
      const value: Record<string, unknown> = {};
      const entries = new Map<string, SourceNode>();
      const merged = new Set<string>();
      for (const pair of n.items) {
        if (!isPair(pair)) continue;
        const key = pair.key as YamlNode | null;
        const keyStart = key?.range?.[0] ?? start;
        const keyEnd = key?.range?.[1] ?? keyStart;
        if (isScalar(key) && typeof key.value === "symbol") {
          this.merge(pair.value as YamlNode | null, depth, value, entries, merged);
          continue;
        }
        if (key !== null && !isScalar(key)) this.fail("yaml/complex-key", "keys must be plain strings, not collections", keyStart, keyEnd);
        const name = key === null ? "" : intern(String(key.value));
        if (entries.has(name) && !merged.has(name)) {
          this.problems.push({ rule: "input/duplicate-key", message: `duplicate key "${name}": the later value replaces the earlier one`, start: keyStart, end: keyEnd, severity: "error" });
        }
        merged.delete(name);
        const child = pair.value === null
          ? { value: null, node: { kind: "scalar" as const, start: keyEnd, end: keyEnd } }
          : this.node(pair.value as YamlNode, depth + 1);
        child.node.keyStart = keyStart;
        child.node.keyEnd = keyEnd;
        entries.set(name, child.node);
        setOwn(value, name, child.value);
      }
      return { value, node: { kind: "object", start, end, entries } };
    }
    return this.fail("yaml/syntax", "unsupported YAML node", start, end);
  }

  /** `<<: *base` or `<<: [*a, *b]`: copy keys the map does not set itself (YAML merge-key spec). */
  private merge(source: YamlNode | null, depth: number, value: Record<string, unknown>, entries: Map<string, SourceNode>, merged: Set<string>): void {
    if (source === null) return;
    const sources = isSeq(source) ? (source.items as YamlNode[]) : [source];
    for (const s of sources) {
      const child = this.node(s, depth + 1);
      if (child.node.kind !== "object" || !child.node.entries) {
        this.fail("yaml/syntax", "a merge key (<<) needs a mapping or a list of mappings", child.node.start, child.node.end);
      }
      for (const [k, node] of child.node.entries) {
        if (entries.has(k)) continue;
        entries.set(k, node);
        merged.add(k);
        setOwn(value, k, (child.value as Record<string, unknown>)[k]);
      }
    }
  }

  private scalar(v: unknown, start: number, end: number): unknown {
    if (typeof v === "string") return intern(v);
    if (v === null || typeof v === "boolean") return v;
    // .inf, .nan and 1e400 stay numbers, as the published schema sees them; the validator warns
    // about them (pulse/number-not-finite) where it knows which field they are.
    if (typeof v === "number") {
      if (!Number.isFinite(v)) this.nonFinite = true;
      return v;
    }
    if (typeof v === "bigint") {
      const n = Number(v);
      if (!Number.isFinite(n)) this.nonFinite = true;
      return n;
    }
    return this.fail("yaml/non-json-value", "this value (binary data, a timestamp or a custom type) has no JSON equivalent", start, end);
  }
}
