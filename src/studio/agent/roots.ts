/**
 * Where the studio's agent pages may point: every path a page sends (a thread's working
 * directory, a file attached to a request, a file to preview) is resolved, its symbolic links
 * followed, and refused (403, with the reason) unless it lies under one of the allowed roots.
 * "Under" means at a separator: /srv/work-old is not under /srv/work.
 */
import { lstatSync, realpathSync } from "node:fs";
import { basename, dirname, isAbsolute, join, resolve, sep } from "node:path";
import { StudioError } from "../studio.js";

const within = (path: string, root: string) => path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);

/** The real path of `abs`: its nearest existing ancestor's real path with the rest joined on. */
function realOf(abs: string, what: string, given: string): string {
  const rest: string[] = [];
  let cur = abs;
  for (;;) {
    try {
      return join(realpathSync(cur), ...rest);
    } catch (e) {
      // ENOTDIR (a name under a file) is walked up as a missing name is: where its real path lies decides.
      const code = (e as NodeJS.ErrnoException).code;
      if (code !== "ENOENT" && code !== "ENOTDIR") throw new StudioError(403, "PATH_REFUSED", `${what} ${JSON.stringify(given)}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
      // A link to nothing would be followed by whatever writes there later: refused, not guessed.
      let isLink = false;
      try {
        isLink = lstatSync(cur).isSymbolicLink();
      } catch {
        // does not exist at all: look at its parent
      }
      if (isLink) throw new StudioError(403, "PATH_REFUSED", `${what} ${JSON.stringify(given)}: ${cur} is a symbolic link to nothing`);
      const parent = dirname(cur);
      if (parent === cur) return abs;
      rest.unshift(basename(cur));
      cur = parent;
    }
  }
}

export class AllowedRoots {
  readonly roots: readonly string[];

  constructor(roots: readonly string[]) {
    if (roots.length === 0) throw new Error("at least one allowed root");
    this.roots = roots.map((r) => realpathSync(resolve(r)));
  }

  /** Whether a real absolute path lies under a root (no check of its own). */
  covers(real: string): boolean {
    return this.roots.some((r) => within(real, r));
  }

  /**
   * The real absolute path `given` names (relative to `base`, else the first root), or a 403
   * saying why not: outside every root, through a link that leaves them, a link to nothing.
   */
  check(given: unknown, what: string, base?: string, extra: readonly string[] = []): string {
    if (typeof given !== "string" || given.trim() === "") throw new StudioError(400, "BAD_PATH", `${what} must be a path (a non-empty string)`);
    if (given.includes("\0")) throw new StudioError(400, "BAD_PATH", `${what} ${JSON.stringify(given.slice(0, 80))} contains a NUL byte`);
    if (given.length > 4096) throw new StudioError(400, "BAD_PATH", `${what} is longer than 4096 characters`);
    const abs = isAbsolute(given) ? resolve(given) : resolve(base ?? this.roots[0]!, given);
    const real = realOf(abs, what, given);
    if (this.covers(real) || extra.some((r) => within(real, r))) return real;
    const how = real !== abs ? ` (${abs} is really ${real}, through a symbolic link)` : abs !== given ? ` (${abs})` : "";
    throw new StudioError(403, "OUTSIDE_ROOTS", `${what} ${JSON.stringify(given)}${how} is outside the allowed roots: ${[...this.roots, ...extra].join(", ")} (pulse studio --root DIR allows another)`);
  }
}
