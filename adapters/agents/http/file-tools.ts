/**
 * The file tools of the HTTP driver: read, list, glob, grep, write, exact-match edit and
 * multi-edit. Edits never guess: the old text must occur exactly once (or `replace_all`), and the
 * file must have been read first and not changed since; anything else is a hard failure the
 * model is told about, never a fuzzy retry.
 */
import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Workspace } from "./workspace.js";

export class ToolError extends Error {}

const MAX_READ_BYTES = 256 << 10;
const MAX_RESULTS = 200;
const SKIP_DIRS = new Set([".git", "node_modules"]);

export class FileTools {
  /** Content hash of each file when the model last read (or wrote) it. */
  private readonly seen = new Map<string, string>();

  constructor(private readonly ws: Workspace) {}

  read(args: { path: string; offset?: number; limit?: number }): string {
    const path = this.ws.resolve(args.path);
    const stat = statOrFail(path, args.path);
    if (stat.isDirectory()) throw new ToolError(`${args.path} is a directory: use list_directory`);
    const buffer = readFileSync(path);
    this.seen.set(path, hash(buffer));
    if (buffer.length > MAX_READ_BYTES && args.offset === undefined) throw new ToolError(`${args.path} has ${buffer.length} bytes: read it in parts with offset and limit (lines)`);
    const lines = buffer.toString("utf8").split("\n");
    const from = Math.max(0, (args.offset ?? 1) - 1);
    const to = args.limit !== undefined ? from + args.limit : lines.length;
    return lines
      .slice(from, to)
      .map((l, i) => `${String(from + i + 1).padStart(6)}\t${l}`)
      .join("\n");
  }

  list(args: { path?: string }): string {
    const path = this.ws.resolve(args.path ?? ".");
    if (!statOrFail(path, args.path ?? ".").isDirectory()) throw new ToolError(`${args.path} is not a directory`);
    return readdirSync(path, { withFileTypes: true })
      .map((d) => (d.isDirectory() ? `${d.name}/` : d.name))
      .sort()
      .join("\n");
  }

  glob(args: { pattern: string; path?: string }): string {
    const base = this.ws.resolve(args.path ?? ".");
    const re = globToRegExp(args.pattern);
    const out: string[] = [];
    for (const file of walk(base)) {
      const rel = this.ws.relative(file);
      if (re.test(rel) || re.test(file.slice(base.length + 1))) out.push(rel);
      if (out.length >= MAX_RESULTS) break;
    }
    return out.length ? out.sort().join("\n") : "no files match";
  }

  grep(args: { pattern: string; path?: string; glob?: string }): string {
    let re: RegExp;
    try {
      re = new RegExp(args.pattern);
    } catch (e) {
      throw new ToolError(`invalid regular expression: ${(e as Error).message}`);
    }
    const base = this.ws.resolve(args.path ?? ".");
    const only = args.glob ? globToRegExp(args.glob) : undefined;
    const out: string[] = [];
    const files = statOrFail(base, args.path ?? ".").isDirectory() ? walk(base) : [base];
    for (const file of files) {
      const rel = this.ws.relative(file);
      if (only && !only.test(rel) && !only.test(rel.split("/").at(-1)!)) continue;
      const buffer = readFileSync(file);
      if (buffer.length > 4 << 20 || buffer.includes(0)) continue; // large or binary
      buffer
        .toString("utf8")
        .split("\n")
        .forEach((line, i) => {
          if (out.length < MAX_RESULTS && re.test(line)) out.push(`${rel}:${i + 1}: ${line.slice(0, 300)}`);
        });
      if (out.length >= MAX_RESULTS) break;
    }
    return out.length ? out.join("\n") : "no matches";
  }

  write(args: { path: string; content: string }): string {
    if (typeof args.content !== "string") throw new ToolError("content must be a string");
    const path = this.ws.resolve(args.path);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, args.content);
    this.seen.set(path, hash(Buffer.from(args.content)));
    return `wrote ${this.ws.relative(path)} (${Buffer.byteLength(args.content)} bytes)`;
  }

  edit(args: { path: string; old_string: string; new_string: string; replace_all?: boolean }): string {
    return this.multiEdit({ path: args.path, edits: [args] });
  }

  /** All edits apply, in order, or none (the file is written once at the end). */
  multiEdit(args: { path: string; edits: { old_string: string; new_string: string; replace_all?: boolean }[] }): string {
    const path = this.ws.resolve(args.path);
    if (!Array.isArray(args.edits) || args.edits.length === 0) throw new ToolError("edits must be a non-empty list");
    const current = readFileSync(path, { flag: "r" });
    const seen = this.seen.get(path);
    if (seen === undefined) throw new ToolError(`read ${args.path} before editing it`);
    if (seen !== hash(current)) throw new ToolError(`${args.path} changed since it was read: read it again`);
    let text = current.toString("utf8");
    args.edits.forEach((e, i) => {
      const which = args.edits.length > 1 ? `edit ${i + 1}: ` : "";
      if (typeof e.old_string !== "string" || typeof e.new_string !== "string") throw new ToolError(`${which}old_string and new_string must be strings`);
      if (e.old_string === "") throw new ToolError(`${which}old_string is empty: use write_file to create a file`);
      if (e.old_string === e.new_string) throw new ToolError(`${which}old_string and new_string are the same`);
      const count = text.split(e.old_string).length - 1;
      if (count === 0) throw new ToolError(`${which}old_string was not found in ${args.path} (it must match exactly, whitespace included)`);
      if (count > 1 && !e.replace_all) throw new ToolError(`${which}old_string occurs ${count} times in ${args.path}: give more context to make it unique, or replace_all`);
      text = e.replace_all ? text.split(e.old_string).join(e.new_string) : text.replace(e.old_string, () => e.new_string);
    });
    writeFileSync(path, text);
    this.seen.set(path, hash(Buffer.from(text)));
    return `edited ${this.ws.relative(path)} (${args.edits.length} edit${args.edits.length === 1 ? "" : "s"})`;
  }
}

function statOrFail(path: string, shown: string) {
  try {
    return statSync(path);
  } catch {
    throw new ToolError(`${shown} does not exist`);
  }
}

function hash(b: Buffer): string {
  return createHash("sha256").update(b).digest("hex");
}

function* walk(dir: string): Generator<string> {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
    if (e.isDirectory()) {
      if (!SKIP_DIRS.has(e.name)) yield* walk(join(dir, e.name));
    } else if (e.isFile()) yield join(dir, e.name);
  }
}

/** `**` any folders, `*` anything but `/`, `?` one character, `{a,b}` alternatives. */
export function globToRegExp(glob: string): RegExp {
  let re = "";
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === "*" && glob[i + 1] === "*") {
      re += glob[i + 2] === "/" ? "(?:.*/)?" : ".*";
      i += glob[i + 2] === "/" ? 2 : 1;
    } else if (c === "*") re += "[^/]*";
    else if (c === "?") re += "[^/]";
    else if (c === "{") {
      const end = glob.indexOf("}", i);
      if (end === -1) re += "\\{";
      else {
        re += `(?:${glob.slice(i + 1, end).split(",").map(escape).join("|")})`;
        i = end;
      }
    } else re += escape(c);
  }
  return new RegExp(`^${re}$`);
}

function escape(s: string): string {
  return s.replace(/[.+^${}()|[\]\\]/g, "\\$&");
}
