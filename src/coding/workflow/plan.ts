/**
 * An approved plan, as a file: Markdown with one pulse per top-level list item (`- `, `* `,
 * `1. `; the item's first line is its title, the lines indented under it its description; the
 * first `# ` heading is the plan's title), or JSON (`{"title", "pulses": [{"id", "title",
 * "description"}]}`, or a bare list of such pulses or strings). Pure: reading the file is the caller's.
 */

export interface PlannedPulse {
  /** The plan's own id for the pulse (JSON), if it gives one. */
  id?: string;
  title: string;
  description: string;
}

export interface Plan {
  title: string | null;
  pulses: PlannedPulse[];
}

export class PlanError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PlanError";
  }
}

const ITEM = /^([-*+]|\d+[.)])\s+(.*)$/;

/** Reads a plan; `name` (the file's) decides JSON (`.json`, or text starting with `{`/`[`) or Markdown, and prefixes errors. */
export function parsePlan(text: string, name = "plan"): Plan {
  const trimmed = text.trim();
  if (name.endsWith(".json") || trimmed.startsWith("{") || trimmed.startsWith("[")) return parseJsonPlan(trimmed, name);
  return parseMarkdownPlan(text, name);
}

function parseMarkdownPlan(text: string, name: string): Plan {
  let title: string | null = null;
  const pulses: PlannedPulse[] = [];
  let current: { title: string; lines: string[] } | undefined;
  let fence = false;
  const close = () => {
    if (current) pulses.push({ title: current.title, description: [current.title, ...current.lines].join("\n").trim() });
    current = undefined;
  };
  text.split(/\r?\n/).forEach((line) => {
    if (/^\s*(```|~~~)/.test(line)) fence = !fence;
    const heading = !fence && /^#\s+(.+)$/.exec(line);
    if (heading && title === null && pulses.length === 0 && !current) {
      title = heading[1]!.trim();
      return;
    }
    const item = !fence && ITEM.exec(line);
    if (item) {
      close();
      const t = item[2]!.trim();
      if (t) current = { title: t, lines: [] };
      return;
    }
    if (current && (/^\s+\S/.test(line) || fence || line.trim() === "")) {
      current.lines.push(line.replace(/^ {2,4}|^\t/, ""));
      return;
    }
    if (line.trim() !== "") close(); // a paragraph or heading ends the item
  });
  close();
  if (pulses.length === 0) throw new PlanError(`${name}: no pulses: a Markdown plan lists one pulse per top-level item ("- Add the parser", "1. Add the parser")`);
  return { title, pulses };
}

function parseJsonPlan(text: string, name: string): Plan {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new PlanError(`${name}: not valid JSON: ${(e as Error).message}`);
  }
  const obj = Array.isArray(value) ? { pulses: value } : (value as Record<string, unknown>);
  if (!obj || typeof obj !== "object" || !Array.isArray(obj.pulses)) throw new PlanError(`${name}: a JSON plan is {"title", "pulses": [...]} or a list of pulses`);
  if (obj.title !== undefined && typeof obj.title !== "string") throw new PlanError(`${name}: title must be a string`);
  const pulses = (obj.pulses as unknown[]).map((p, i): PlannedPulse => {
    const at = `${name}: pulses[${i}]`;
    if (typeof p === "string") {
      if (!p.trim()) throw new PlanError(`${at}: an empty pulse`);
      return { title: firstLine(p), description: p.trim() };
    }
    if (!p || typeof p !== "object") throw new PlanError(`${at}: must be a string or {"title", "description"}`);
    const r = p as Record<string, unknown>;
    for (const k of Object.keys(r)) if (!["id", "title", "description"].includes(k)) throw new PlanError(`${at}.${k}: unknown field (the fields are id, title, description)`);
    if (typeof r.title !== "string" || !r.title.trim()) throw new PlanError(`${at}.title: required, a non-empty string`);
    if (r.description !== undefined && typeof r.description !== "string") throw new PlanError(`${at}.description: must be a string`);
    if (r.id !== undefined && typeof r.id !== "string") throw new PlanError(`${at}.id: must be a string`);
    return { ...(r.id ? { id: r.id as string } : {}), title: r.title.trim(), description: ((r.description as string | undefined) ?? r.title).trim() };
  });
  if (pulses.length === 0) throw new PlanError(`${name}: pulses is empty: a plan has at least one pulse`);
  return { title: typeof obj.title === "string" ? obj.title : null, pulses };
}

function firstLine(s: string): string {
  return s.trim().split("\n")[0]!.trim();
}
