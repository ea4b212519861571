/**
 * The actions under the agent's `actions/`: one directory each, either seed 002's layout
 * (`meta.json` + `perform.js`, CommonJS or ESM) or an Agent Skills folder (`SKILL.md` with YAML
 * front matter `name` and `description`, and a script under `scripts/`). A skill declares what
 * the seed's meta.json would in its front matter's `metadata` (`arguments`, `timeout_sec`,
 * `tags`, `entry`); without them it takes no arguments, 120 s, no tags, and its only script.
 * A directory that is neither, or is malformed, is reported as a problem and skipped.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import type { ActionArgument, ActionSpec } from "../types.js";

const TYPES = new Set(["string", "number", "integer", "boolean", "object", "array"]);
const SCRIPT = /\.(m?js|cjs|sh|py)$/;

export interface Discovered {
  actions: ActionSpec[];
  problems: string[];
}

function args(value: unknown, where: string): ActionArgument[] {
  if (value === undefined) return [];
  if (typeof value === "string") value = JSON.parse(value);
  if (!Array.isArray(value)) throw new Error(`${where}: arguments must be a list`);
  return value.map((raw, i) => {
    const a = raw as Record<string, unknown>;
    if (typeof a?.name !== "string" || !a.name) throw new Error(`${where}: arguments[${i}].name must be a string`);
    const type = (a.type ?? "string") as string;
    if (!TYPES.has(type)) throw new Error(`${where}: arguments[${i}].type must be one of ${[...TYPES].join(", ")}`);
    return { name: a.name, type: type as ActionArgument["type"], ...(typeof a.description === "string" ? { description: a.description } : {}), required: a.required === true };
  });
}

function tags(value: unknown): string[] {
  if (Array.isArray(value)) return value.map(String);
  if (typeof value === "string") return value.split(/[,\s]+/).filter(Boolean);
  return [];
}

function timeout(value: unknown, where: string): number {
  if (value === undefined) return 120;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${where}: timeout_sec must be a number > 0`);
  return n;
}

function fromMeta(dir: string): ActionSpec {
  const file = join(dir, "meta.json");
  const meta = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
  if (typeof meta.name !== "string" || !meta.name) throw new Error(`${file}: name must be a string`);
  if (!existsSync(join(dir, "perform.js"))) throw new Error(`${dir}: meta.json without perform.js`);
  return { name: meta.name, description: typeof meta.description === "string" ? meta.description : "", arguments: args(meta.arguments, file), timeout_sec: timeout(meta.timeout_sec, file), tags: tags(meta.tags), dir, layout: "perform", entry: "perform.js" };
}

function fromSkill(dir: string): ActionSpec {
  const file = join(dir, "SKILL.md");
  const text = readFileSync(file, "utf8");
  const m = /^---\r?\n([\s\S]*?)\r?\n---/.exec(text);
  if (!m) throw new Error(`${file}: no front matter (--- name: …, description: … ---)`);
  const fm = (parse(m[1]!) ?? {}) as Record<string, unknown>;
  if (typeof fm.name !== "string" || !fm.name) throw new Error(`${file}: front matter name must be a string`);
  if (typeof fm.description !== "string") throw new Error(`${file}: front matter description must be a string`);
  const meta = (fm.metadata ?? {}) as Record<string, unknown>;
  const scripts = existsSync(join(dir, "scripts")) ? readdirSync(join(dir, "scripts")).filter((f) => SCRIPT.test(f)).sort() : [];
  const entry = typeof meta.entry === "string" ? meta.entry : scripts.length === 1 ? `scripts/${scripts[0]}` : undefined;
  if (!entry) throw new Error(`${file}: ${scripts.length ? `several scripts (${scripts.join(", ")}): name one in metadata.entry` : "no script under scripts/"}`);
  if (!existsSync(join(dir, entry))) throw new Error(`${file}: metadata.entry ${entry} does not exist`);
  return { name: fm.name, description: fm.description, arguments: args(meta.arguments, file), timeout_sec: timeout(meta.timeout_sec, file), tags: tags(meta.tags), dir, layout: "skill", entry };
}

export function discoverActions(actionsDir: string): Discovered {
  const out: Discovered = { actions: [], problems: [] };
  if (!existsSync(actionsDir)) return out;
  const seen = new Map<string, string>();
  for (const name of readdirSync(actionsDir).sort()) {
    const dir = join(actionsDir, name);
    if (!statSync(dir).isDirectory()) continue;
    try {
      const spec = existsSync(join(dir, "meta.json")) ? fromMeta(dir) : existsSync(join(dir, "SKILL.md")) ? fromSkill(dir) : undefined;
      if (!spec) {
        out.problems.push(`${dir}: neither meta.json + perform.js nor SKILL.md: skipped`);
        continue;
      }
      if (seen.has(spec.name)) {
        out.problems.push(`${dir}: action name "${spec.name}" is taken by ${seen.get(spec.name)}: skipped`);
        continue;
      }
      seen.set(spec.name, dir);
      out.actions.push(spec);
    } catch (e) {
      out.problems.push(`${(e as Error).message}: skipped`);
    }
  }
  return out;
}
