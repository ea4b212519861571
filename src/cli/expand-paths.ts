/**
 * Command-line operands → manifest files. A file is taken as given (whatever its extension), a
 * directory is searched recursively for .json/.jsonc/.yaml/.yml files that look like PULSE
 * manifests, and a quoted glob (`'manifests/**\/*.yaml'`, as CI configs write them) is expanded
 * here since no shell did.
 */
import { open, readdir, stat } from "node:fs/promises";
import { join, relative, sep } from "node:path";

export const MANIFEST_EXTENSIONS = [".json", ".jsonc", ".yaml", ".yml"];
const SKIP_DIRS = new Set(["node_modules", ".git", "dist", "coverage"]);

export interface Expansion {
  files: string[];
  /** Operands that matched nothing: a usage error. */
  unmatched: string[];
  /** Files found in directories that are not PULSE manifests (package.json, reports, schemas). */
  skipped: string[];
}

export function isGlob(operand: string): boolean {
  return /[*?[\]{}]/.test(operand);
}

export async function expandOperands(operands: readonly string[], cwd = process.cwd()): Promise<Expansion> {
  const files: string[] = [];
  const unmatched: string[] = [];
  const skipped: string[] = [];
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
      if (isDir) {
        const found = await walkManifests(operand, cwd);
        matched = found.manifests;
        skipped.push(...found.skipped);
      } else {
        matched = [operand];
      }
    }
    if (matched.length === 0) unmatched.push(operand);
    matched.forEach(add);
  }
  return { files, unmatched, skipped };
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

/**
 * The JSON and YAML files of a directory tree, split into those that look like manifests and
 * those that do not. A directory of a project holds package.json, schemas, reports (the diagram
 * tool's own JSON): only a file whose text names `pulse_protocol_version` or `loop_id` as a key
 * is taken. A file given by name is always validated, whatever it holds.
 */
async function walkManifests(dir: string, cwd: string): Promise<{ manifests: string[]; skipped: string[] }> {
  const base = dir.replace(/[\\/]+$/, "") || ".";
  const files = await walkFiles(base, cwd, (child) => (base === "." ? child : `${base}/${child}`), (_, name) => MANIFEST_EXTENSIONS.some((ext) => name.toLowerCase().endsWith(ext)));
  const manifests: string[] = [];
  const skipped: string[] = [];
  for (const f of files) {
    const path = f.split("/").join(sep);
    (await looksLikeManifest(resolveFrom(cwd, path)) ? manifests : skipped).push(path);
  }
  return { manifests, skipped };
}

const SNIFF_BYTES = 256 * 1024;
const MANIFEST_KEY = /(?:^|[\s{,"'])(?:pulse_protocol_version|loop_id)["']?\s*:/m;
/** One buffer for every sniff: files are looked at one after another. */
let sniffBuffer: Buffer | undefined;

/** Whether the start of a file names a manifest's identifying keys (unreadable: let the reader say why). */
async function looksLikeManifest(file: string): Promise<boolean> {
  let handle;
  try {
    handle = await open(file, "r");
    const buffer = (sniffBuffer ??= Buffer.allocUnsafe(SNIFF_BYTES));
    const { bytesRead } = await handle.read(buffer, 0, SNIFF_BYTES, 0);
    return MANIFEST_KEY.test(buffer.toString("utf8", 0, bytesRead));
  } catch {
    return true;
  } finally {
    await handle?.close();
  }
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
