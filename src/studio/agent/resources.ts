/**
 * The agent home's guides, knowledge and actions as the managers see them: list, read, validate
 * (with a preview of what the agent will read), save, delete, and a new action from the
 * template. A resource is named, never located by the page: the name is checked to be one plain
 * file or directory name, and the file it gives is checked to lie in the home's folder. Checks
 * are the agent's own (its corpus loader, its action discovery), run on a scratch copy first, so
 * nothing invalid is ever written.
 */
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { discoverActions } from "../../coding/agent/actions/discover.js";
import { homePaths } from "../../coding/agent/config.js";
import { loadGuides, loadKnowledge } from "../../coding/agent/retrieval/corpus.js";
import { StudioError } from "../studio.js";
import { AllowedRoots } from "./roots.js";
import { PERFORM_TEMPLATE, metaTemplate } from "./template.js";

export type Kind = "guides" | "knowledge" | "actions";
export const KINDS: readonly Kind[] = ["guides", "knowledge", "actions"];
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
/** The files of an action the manager edits (seed 002's layout). */
const ACTION_FILES = ["meta.json", "perform.js"] as const;
const MAX_FILE = 256 * 1024;

export interface Checked {
  ok: boolean;
  errors: string[];
  preview: unknown;
}

function scratch<T>(fn: (dir: string) => T): T {
  const dir = mkdtempSync(join(tmpdir(), "pulse-studio-check-"));
  try {
    return fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function atomicWrite(file: string, text: string): void {
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, text);
  renameSync(tmp, file);
}

export class Resources {
  private readonly dirs: Record<Kind, string>;
  private readonly inside: AllowedRoots;

  constructor(home: string) {
    const p = homePaths(home);
    this.dirs = { guides: p.guides, knowledge: p.knowledge, actions: p.actions };
    for (const d of Object.values(this.dirs)) mkdirSync(d, { recursive: true });
    this.inside = new AllowedRoots(Object.values(this.dirs));
  }

  static kind(text: string | undefined): Kind | undefined {
    return KINDS.find((k) => k === text);
  }

  /** A resource's path in the home, refused unless the name is one plain name and the path stays in its folder. */
  private path(kind: Kind, name: unknown): string {
    if (typeof name !== "string" || !NAME.test(name) || name.includes("..")) throw new StudioError(400, "BAD_NAME", `a ${kind === "actions" ? "action" : kind === "guides" ? "guide" : "knowledge"} name is letters, digits, '.', '_' and '-' (no '..', at most 64, starting with a letter or digit), not ${JSON.stringify(String(name).slice(0, 80))}`);
    const path = join(this.dirs[kind], kind === "actions" ? name : `${name}.json`);
    this.inside.check(path, `${kind}/${name}`);
    return path;
  }

  list(kind: Kind): { items: { name: string; title: string; detail: string; problem?: string }[]; problems: string[] } {
    const dir = this.dirs[kind];
    if (kind === "actions") {
      const found = discoverActions(dir);
      const byDir = new Map(found.actions.map((a) => [a.dir, a]));
      const items = readdirSync(dir)
        .filter((n) => NAME.test(n) && lstatSync(join(dir, n)).isDirectory())
        .sort()
        .map((n) => {
          const a = byDir.get(join(dir, n));
          const problem = a ? undefined : found.problems.find((p) => p.includes(join(dir, n)));
          return { name: n, title: a?.name ?? n, detail: a ? `${a.description} · ${a.layout} · ${a.arguments.map((x) => `${x.name}: ${x.type}`).join(", ") || "no arguments"}${a.tags.length ? ` · tags ${a.tags.join(", ")}` : ""}` : "", ...(problem ? { problem } : {}) };
        });
      return { items, problems: found.problems };
    }
    const items = readdirSync(dir)
      .filter((f) => f.endsWith(".json") && NAME.test(f.slice(0, -5)))
      .sort()
      .map((f) => {
        const name = f.slice(0, -5);
        const checked = this.check(kind, { content: readFileSync(join(dir, f), "utf8") });
        const meta = (checked.preview as { meta?: { name?: string; domain?: string } } | null)?.meta;
        return { name, title: meta?.name ?? name, detail: checked.ok ? `${(checked.preview as { entries: unknown[] }).entries.length} entries${meta?.domain ? ` · ${meta.domain}` : ""}` : "", ...(checked.ok ? {} : { problem: checked.errors.join("; ") }) };
      });
    return { items, problems: items.flatMap((i) => (i.problem ? [i.problem] : [])) };
  }

  get(kind: Kind, name: unknown): { name: string; files: Record<string, string>; layout?: string } {
    const path = this.path(kind, name);
    if (!existsSync(path)) throw new StudioError(404, "NOT_FOUND", `no ${kind}/${String(name)} in the agent's home`);
    if (kind !== "actions") return { name: name as string, files: { content: readFileSync(path, "utf8") } };
    const files: Record<string, string> = {};
    for (const f of [...ACTION_FILES, "SKILL.md"]) if (existsSync(join(path, f))) files[f] = readFileSync(join(path, f), "utf8").slice(0, MAX_FILE);
    return { name: name as string, files, layout: files["meta.json"] !== undefined ? "perform" : files["SKILL.md"] !== undefined ? "skill" : "unknown" };
  }

  /** What the agent would make of these contents: its errors (positioned), or a preview of what it reads. */
  check(kind: Kind, files: Record<string, unknown>, name = "draft"): Checked {
    for (const [f, text] of Object.entries(files)) {
      if (typeof text !== "string") return { ok: false, errors: [`${f}: must be text`], preview: null };
      if (text.length > MAX_FILE) return { ok: false, errors: [`${f}: larger than ${MAX_FILE} bytes`], preview: null };
    }
    if (kind === "actions") {
      const unknown = Object.keys(files).filter((f) => !(ACTION_FILES as readonly string[]).includes(f));
      if (unknown.length) return { ok: false, errors: [`an action is edited as ${ACTION_FILES.join(" and ")}, not ${unknown.join(", ")}`], preview: null };
      if (typeof files["meta.json"] !== "string" || typeof files["perform.js"] !== "string") return { ok: false, errors: ["an action needs meta.json and perform.js"], preview: null };
      try {
        JSON.parse(files["meta.json"]);
      } catch (e) {
        return { ok: false, errors: [`meta.json: ${(e as Error).message}`], preview: null };
      }
      if (!/\bPerform\b/.test(files["perform.js"])) return { ok: false, errors: ["perform.js: defines no Perform class (module.exports = { Perform } or export class Perform)"], preview: null };
      return scratch((dir) => {
        mkdirSync(join(dir, name));
        for (const f of ACTION_FILES) writeFileSync(join(dir, name, f), files[f] as string);
        const found = discoverActions(dir);
        if (found.actions.length === 0) return { ok: false, errors: found.problems.map((p) => p.replace(`${dir}/`, "").replace(/: skipped$/, "")), preview: null };
        const { dir: _d, ...spec } = found.actions[0]!;
        return { ok: true, errors: [], preview: spec };
      });
    }
    const text = files.content;
    if (typeof text !== "string") return { ok: false, errors: ["send the file's text as content"], preview: null };
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (e) {
      return { ok: false, errors: [`${name}.json: ${(e as Error).message}`], preview: null };
    }
    return scratch((dir) => {
      const file = join(dir, `${name}.json`);
      writeFileSync(file, text);
      try {
        const docs = kind === "guides" ? loadGuides([file]) : loadKnowledge([file]);
        return { ok: true, errors: [], preview: { meta: (value as { meta: unknown }).meta, entries: docs.map((d) => d.entry) } };
      } catch (e) {
        return { ok: false, errors: [(e as Error).message.replace(`${dir}/`, "")], preview: null };
      }
    });
  }

  /** Saves after the same check: invalid contents are refused (422) with the errors, nothing written. */
  save(kind: Kind, name: unknown, files: Record<string, unknown>, create = false): Checked {
    const path = this.path(kind, name);
    if (create && existsSync(path)) throw new StudioError(409, "EXISTS", `${kind}/${String(name)} exists already`);
    const checked = this.check(kind, files, name as string);
    if (!checked.ok) throw new StudioError(422, "INVALID", checked.errors.join("; "));
    if (kind === "actions") {
      mkdirSync(path, { recursive: true });
      for (const f of ACTION_FILES) atomicWrite(join(path, f), files[f] as string);
    } else atomicWrite(path, files.content as string);
    return checked;
  }

  /** A new action from the template (seed 002's meta.json + perform.js), refused if the name is taken. */
  fromTemplate(name: unknown, description?: unknown): Checked {
    if (typeof name === "string" && discoverActions(this.dirs.actions).actions.some((a) => a.name === name)) throw new StudioError(409, "EXISTS", `an action named ${name} exists already`);
    const desc = typeof description === "string" && description.trim() ? description.trim() : `Echo a text back (made from the template: edit perform.js)`;
    return this.save("actions", name, { "meta.json": metaTemplate(name as string, desc), "perform.js": PERFORM_TEMPLATE }, true);
  }

  remove(kind: Kind, name: unknown): void {
    const path = this.path(kind, name);
    if (!existsSync(path) && !lstatOrNull(path)) throw new StudioError(404, "NOT_FOUND", `no ${kind}/${String(name)} in the agent's home`);
    // A link is removed as a link: what it points to is not the home's to delete.
    if (lstatOrNull(path)?.isSymbolicLink()) rmSync(path);
    else rmSync(path, { recursive: true, force: true });
  }
}

function lstatOrNull(path: string) {
  try {
    return lstatSync(path);
  } catch {
    return null;
  }
}
