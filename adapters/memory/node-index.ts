/**
 * The committed nodes of one workspace, indexed by what retrieve_context and consolidate look
 * for, so neither reads the whole history: the words of each node (of its type and its content),
 * its type, its content key (type and content: what consolidation merges on), and one order of
 * every node, most confident first and oldest first among equals.
 *
 * Words are runs of letters, digits and underscores, lowercased: "Answer #1" has the words
 * "answer" and "1". Structured content contributes the words of its keys and of its string,
 * number and boolean values, at any depth.
 */
import type { NodeRecord } from "./records.js";

const WORD = /[\p{L}\p{N}_]+/gu;

/** The words of a value, added to `into`. */
export function wordsOf(value: unknown, into: Set<string> = new Set()): Set<string> {
  if (typeof value === "string") {
    for (const m of value.toLowerCase().matchAll(WORD)) into.add(m[0]);
  } else if (typeof value === "number" || typeof value === "boolean") {
    wordsOf(String(value), into);
  } else if (Array.isArray(value)) {
    for (const v of value) wordsOf(v, into);
  } else if (value !== null && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      wordsOf(k, into);
      wordsOf(v, into);
    }
  }
  return into;
}

/** What retrieve_context filters on: every word, and the type when given. */
export interface NodeQuery {
  words: readonly string[];
  type?: string;
}

export function matches(query: NodeQuery, record: NodeRecord): boolean {
  if (query.type !== undefined && record.node.type !== query.type) return false;
  return query.words.every((w) => record.words.includes(w));
}

/** Most confident first, oldest first among equals. */
export function byConfidence(x: NodeRecord, y: NodeRecord): number {
  return y.node.confidence - x.node.confidence || x.created - y.created;
}

function addTo(map: Map<string, Set<string>>, key: string, id: string): number {
  let set = map.get(key);
  if (!set) map.set(key, (set = new Set()));
  set.add(id);
  return set.size;
}

function removeFrom(map: Map<string, Set<string>>, key: string, id: string): number {
  const set = map.get(key);
  if (!set) return 0;
  set.delete(id);
  if (set.size === 0) map.delete(key);
  return set.size;
}

export class NodeIndex {
  private readonly byWord = new Map<string, Set<string>>();
  private readonly byType = new Map<string, Set<string>>();
  private readonly byKey = new Map<string, Set<string>>();
  /** Content keys held by two or more nodes: what a consolidation merges. */
  readonly duplicated = new Set<string>();
  /** Every node, in byConfidence order (a sorted array: inserting moves memory, it reads nothing). */
  private readonly order: NodeRecord[] = [];

  get size(): number {
    return this.order.length;
  }

  add(record: NodeRecord): void {
    const id = record.node.id;
    for (const w of record.words) addTo(this.byWord, w, id);
    if (record.node.type !== undefined) addTo(this.byType, record.node.type, id);
    if (addTo(this.byKey, record.key, id) >= 2) this.duplicated.add(record.key);
    this.order.splice(this.position(record), 0, record);
  }

  remove(record: NodeRecord): void {
    const id = record.node.id;
    for (const w of record.words) removeFrom(this.byWord, w, id);
    if (record.node.type !== undefined) removeFrom(this.byType, record.node.type, id);
    if (removeFrom(this.byKey, record.key, id) < 2) this.duplicated.delete(record.key);
    const at = this.position(record);
    if (this.order[at]?.node.id === id) this.order.splice(at, 1);
  }

  /** The first index whose record does not come before `record`. */
  private position(record: NodeRecord): number {
    let lo = 0;
    let hi = this.order.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (byConfidence(this.order[mid] as NodeRecord, record) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Ids of the nodes the query's words and type select; undefined when it selects every node. */
  candidates(query: NodeQuery): ReadonlySet<string> | undefined {
    const sets: ReadonlySet<string>[] = [];
    if (query.type !== undefined) sets.push(this.byType.get(query.type) ?? new Set());
    for (const w of query.words) sets.push(this.byWord.get(w) ?? new Set());
    if (sets.length === 0) return undefined;
    sets.sort((a, b) => a.size - b.size);
    const [smallest, ...rest] = sets as [ReadonlySet<string>, ...ReadonlySet<string>[]];
    if (rest.length === 0) return smallest;
    const out = new Set<string>();
    for (const id of smallest) if (rest.every((s) => s.has(id))) out.add(id);
    return out;
  }

  /**
   * The first `k` nodes in confidence order that `accept` admits. The walk stops at the k-th
   * admitted node, so it costs as much as how far down the order that one lies.
   */
  top(k: number, accept: (record: NodeRecord) => boolean = () => true): NodeRecord[] {
    const out: NodeRecord[] = [];
    if (k === 0) return out;
    for (const record of this.order) {
      if (!accept(record)) continue;
      out.push(record);
      if (out.length === k) break;
    }
    return out;
  }

  /** Ids of the nodes with this content key. */
  group(key: string): ReadonlySet<string> | undefined {
    return this.byKey.get(key);
  }
}

/** The first k of `records` in byConfidence order, without sorting them all when k is small. */
export function mostConfident(records: NodeRecord[], k: number): NodeRecord[] {
  if (k === 0) return [];
  if (k * 16 >= records.length) return records.sort(byConfidence).slice(0, k);
  const best: NodeRecord[] = [];
  for (const record of records) {
    if (best.length === k && byConfidence(record, best[k - 1]!) >= 0) continue;
    let lo = 0;
    let hi = best.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (byConfidence(best[mid]!, record) <= 0) lo = mid + 1;
      else hi = mid;
    }
    best.splice(lo, 0, record);
    if (best.length > k) best.pop();
  }
  return best;
}

/** Groups of two or more records with one content key, oldest member first, groups by their oldest member. */
export function grouped(groups: Iterable<NodeRecord[]>): NodeRecord[][] {
  const out: NodeRecord[][] = [];
  for (const g of groups) if (g.length >= 2) out.push(g.sort((a, b) => a.created - b.created));
  return out.sort((a, b) => (a[0] as NodeRecord).created - (b[0] as NodeRecord).created);
}
