/**
 * Command-line operands → manifest files. A file is taken as given (whatever its extension), a
 * directory is searched recursively for .json/.jsonc/.yaml/.yml, and a quoted glob
 * (`'manifests/**\/*.yaml'`, as CI configs write them) is expanded here since no shell did.
 */
import { readdir, stat } from "node:fs/promises";
import { join, relative, sep } from "node:path";

export const MANIFEST_EXTENSIONS = [".json", ".jsonc", ".yaml", ".yml"];
const SKIP_DIRS = new Set(["node_modules", ".git", "dist", "coverage"]);

export interface Expansion {
  files: string[];
  /** Operands that matched nothing: a usage error. */
  unmatched: string[];
}

export function isGlob(operand: string): boolean {
  return /[*?[\]{}]/.test(operand);
}

export async function expandOperands(operands: readonly string[], cwd = process.cwd()): Promise<Expansion> {
  const files: string[] = [];
  const unmatched: string[] = [];
  const seen = new Set<string>();
  const add = (file: string): void => {
    if (!seen.has(file)) {
      seen.add(file);
      files.push(file);
    }
  };
  for (const operand of operands) {
    let matched: string[];
    if (isGlob(operand)) {
      matched = await expandGlob(operand, cwd);
    } else {
      let isDir = false;
      try {
        isDir = (await stat(resolveFrom(cwd, operand))).isDirectory();
      } catch {
        // A missing file is reported when it is read, with the reason.
      }
      matched = isDir ? await walkManifests(operand, cwd) : [operand];
    }
    if (matched.length === 0) unmatched.push(operand);
    matched.forEach(add);
  }
  return { files, unmatched };
}

function resolveFrom(cwd: string, path: string): string {
  return path.startsWith("/") ? path : join(cwd, path);
}

/**
 * Files below `dir` (sorted, skipping dot folders, node_modules, dist and coverage) whose path,
 * written as `prefix` + the relative path with forward slashes, passes `keep`.
 */
async function walkFiles(dir: string, cwd: string, prefix: (child: string) => string, keep: (path: string, name: string) => boolean): Promise<string[]> {
  const out: string[] = [];
  const visit = async (d: string, rel: string): Promise<void> => {
    let entries;
    try {
      entries = await readdir(resolveFrom(cwd, d), { withFileTypes: true });
    } catch {
      return;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      const path = rel === "" ? prefix(e.name) : `${rel}/${e.name}`;
      if (e.isDirectory()) {
        if (!SKIP_DIRS.has(e.name) && !e.name.startsWith(".")) await visit(join(d, e.name), path);
      } else if (e.isFile() && keep(path, e.name)) {
        out.push(path);
      }
    }
  };
  await visit(dir, "");
  return out;
}

async function walkManifests(dir: string, cwd: string): Promise<string[]> {
  const base = dir.replace(/[\\/]+$/, "") || ".";
  const files = await walkFiles(base, cwd, (child) => (base === "." ? child : `${base}/${child}`), (_, name) => MANIFEST_EXTENSIONS.some((ext) => name.toLowerCase().endsWith(ext)));
  return files.map((f) => f.split("/").join(sep));
}

/** Glob → anchored RegExp over forward-slash paths: `*`, `?`, `**`, `[abc]`, `{a,b}`. */
export function globToRegExp(glob: string): RegExp {
  let re = "";
  let braces = 0;
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i] as string;
    if (c === "*") {
      if (glob[i + 1] === "*") {
        const slash = glob[i + 2] === "/";
        re += slash ? "(?:.*/)?" : ".*";
        i += slash ? 2 : 1;
      } else {
        re += "[^/]*";
      }
    } else if (c === "?") re += "[^/]";
    else if (c === "[") {
      const close = glob.indexOf("]", i + 1);
      if (close < 0) re += "\\[";
      else {
        const body = glob.slice(i + 1, close).replace(/\\/g, "\\\\").replace(/^!/, "^");
        re += `[${body}]`;
        i = close;
      }
    } else if (c === "{") {
      braces++;
      re += "(?:";
    } else if (c === "}" && braces > 0) {
      braces--;
      re += ")";
    } else if (c === "," && braces > 0) re += "|";
    else re += c.replace(/[.+^$()|\\]/g, "\\$&");
  }
  return new RegExp(`^${re}$`);
}

async function expandGlob(glob: string, cwd: string): Promise<string[]> {
  const normalized = glob.split(sep).join("/");
  const parts = normalized.split("/");
  const staticParts: string[] = [];
  for (const p of parts) {
    if (isGlob(p)) break;
    staticParts.push(p);
  }
  const base = staticParts.join("/") || ".";
  const re = globToRegExp(normalized);
  const prefix = (child: string) => (base === "." && !normalized.startsWith("./") ? child : `${base}/${child}`);
  if (staticParts.length === parts.length) return [];
  const out = await walkFiles(base === "" ? "/" : base, cwd, prefix, (path) => re.test(path));
  return out.map((p) => (p.startsWith("/") ? p : relative(cwd, resolveFrom(cwd, p)) || p));
}
