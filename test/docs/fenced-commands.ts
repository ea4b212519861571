/**
 * The shell commands a reader copies from the README and docs/: every ```sh, ```bash,
 * ```shell and ```console block, split into commands the way a shell would read them
 * (backslash continuations and quotes spanning lines join lines; comments and blank lines go;
 * in a console block only the `$ ` lines are commands).
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";

export interface DocCommand {
  /** Path relative to the repository, and the 1-based line the command starts on. */
  file: string;
  line: number;
  text: string;
  /** The 1-based line of the block's opening fence: a block's commands share one shell. */
  block: number;
}

const SHELL_FENCE = /^```(sh|bash|shell|console)\s*$/;

/** README.md and every Markdown file under docs/, sorted. */
export function docFiles(root: string): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(dir)
      .sort()
      .flatMap((name) => {
        const path = join(dir, name);
        if (statSync(path).isDirectory()) return walk(path);
        return name.endsWith(".md") ? [relative(root, path)] : [];
      });
  return ["README.md", ...walk(join(root, "docs"))];
}

export function commandsOf(file: string, text: string): DocCommand[] {
  const lines = text.split("\n");
  const out: DocCommand[] = [];
  let language: string | undefined;
  let block = 0;
  let pending: { line: number; text: string; block: number } | undefined;
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i] as string;
    if (language === undefined) {
      language = SHELL_FENCE.exec(raw.trim())?.[1];
      block = i + 1;
      continue;
    }
    if (raw.trim() === "```") {
      if (pending) out.push({ file, ...pending });
      pending = undefined;
      language = undefined;
      continue;
    }
    let line = raw;
    if (!pending) {
      if (language === "console") {
        if (!line.startsWith("$ ")) continue;
        line = line.slice(2);
      }
      if (line.trim() === "" || line.trim().startsWith("#")) continue;
      pending = { line: i + 1, text: line, block };
    } else {
      pending.text += "\n" + line;
    }
    if (!continues(pending.text)) {
      out.push({ file, ...pending });
      pending = undefined;
    }
  }
  return out;
}

/** Whether a command goes on to the next line: a trailing backslash, or a quote left open. */
function continues(text: string): boolean {
  if (/\\$/.test(text)) return true;
  let quote = "";
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      if (c === "\\" && quote === '"') i++;
      else if (c === quote) quote = "";
    } else if (c === "\\") i++;
    else if (c === "'" || c === '"') quote = c;
    else if (c === "#" && (i === 0 || /\s/.test(text[i - 1] as string))) {
      const nl = text.indexOf("\n", i);
      if (nl < 0) break;
      i = nl;
    }
  }
  return quote !== "";
}

export function readCommands(root: string): DocCommand[] {
  return docFiles(root).flatMap((file) => commandsOf(file, readFileSync(join(root, file), "utf8")));
}
