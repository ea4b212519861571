/**
 * Guides and knowledge in seed 002's store format, one JSON file each
 * (`{ meta: { name, version, domain }, entries: [...] }`; a guide entry has `plan`, a knowledge
 * entry `content`), read from files or directories of them. A malformed file is refused naming
 * the file and the entry.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type { GuideEntry, KnowledgeEntry } from "../types.js";

export interface Doc<E> {
  id: string;
  text: string;
  entry: E;
  source: string;
}

export class CorpusError extends Error {}

function filesOf(paths: readonly string[]): string[] {
  return paths.flatMap((p) => {
    if (!existsSync(p)) return [];
    if (statSync(p).isDirectory()) return readdirSync(p).filter((f) => f.endsWith(".json")).sort().map((f) => join(p, f));
    return [p];
  });
}

function load<E>(paths: readonly string[], kind: "guide" | "knowledge"): Doc<E>[] {
  const docs: Doc<E>[] = [];
  for (const file of filesOf(paths)) {
    let value: { meta?: { name?: unknown }; entries?: unknown };
    try {
      value = JSON.parse(readFileSync(file, "utf8"));
    } catch (e) {
      throw new CorpusError(`${file}: ${(e as Error).message}`);
    }
    if (!value || typeof value !== "object" || typeof value.meta?.name !== "string") throw new CorpusError(`${file}: meta.name must be a string (the ${kind} store format is { meta: { name, version, domain }, entries: [...] })`);
    if (!Array.isArray(value.entries)) throw new CorpusError(`${file}: entries must be a list`);
    value.entries.forEach((raw, i) => {
      const e = raw as Record<string, unknown>;
      const at = `${file}: entries[${i}]`;
      if (typeof e?.name !== "string" || typeof e.description !== "string") throw new CorpusError(`${at}: needs name and description (strings)`);
      if (kind === "guide") {
        if (!Array.isArray(e.plan) || e.plan.some((s) => typeof s !== "string")) throw new CorpusError(`${at}.plan: must be a list of steps (strings)`);
        docs.push({ id: `${value.meta!.name}/${e.name}`, text: `${e.name}\n${e.description}\n${(e.plan as string[]).join("\n")}`, entry: { name: e.name, description: e.description, plan: e.plan } as E, source: file });
      } else {
        if (typeof e.content !== "string") throw new CorpusError(`${at}.content: must be a string`);
        docs.push({ id: `${value.meta!.name}/${e.name}`, text: `${e.name}\n${e.description}\n${e.content}`, entry: { name: e.name, description: e.description, content: e.content } as E, source: file });
      }
    });
  }
  return docs;
}

export const loadGuides = (paths: readonly string[]): Doc<GuideEntry>[] => load<GuideEntry>(paths, "guide");
export const loadKnowledge = (paths: readonly string[]): Doc<KnowledgeEntry>[] => load<KnowledgeEntry>(paths, "knowledge");
