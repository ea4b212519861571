/**
 * Confinement of the HTTP driver's tools to the loop's workspace: a path is resolved against the
 * workspace and refused when it lands outside, directly (`/etc/passwd`, `../x`) or through a
 * symbolic link that leads out. The check runs on the real path of the longest existing prefix,
 * so a file about to be created under a linked folder is caught too.
 */
import { existsSync, realpathSync } from "node:fs";
import { dirname, isAbsolute, relative, resolve, sep } from "node:path";

export class WorkspaceError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "WorkspaceError";
  }
}

export class Workspace {
  readonly root: string;

  constructor(root: string) {
    this.root = realpathSync(root);
  }

  /** The absolute path of `path` (relative to the workspace, or absolute inside it), or a WorkspaceError. */
  resolve(path: string): string {
    if (typeof path !== "string" || path === "") throw new WorkspaceError("a path is required");
    if (path.includes("\0")) throw new WorkspaceError("a path may not contain NUL");
    const absolute = isAbsolute(path) ? resolve(path) : resolve(this.root, path);
    if (!this.inside(absolute)) throw new WorkspaceError(`${path} is outside the workspace`);
    // Follow links on the part that exists: a link inside may point outside.
    let existing = absolute;
    while (!existsSync(existing) && existing !== dirname(existing)) existing = dirname(existing);
    const real = realpathSync(existing);
    if (!this.inside(real)) throw new WorkspaceError(`${path} leads outside the workspace (through a symbolic link to ${real})`);
    return absolute;
  }

  /** The path relative to the workspace, for messages. */
  relative(absolute: string): string {
    return relative(this.root, absolute) || ".";
  }

  private inside(path: string): boolean {
    return path === this.root || path.startsWith(this.root + sep);
  }
}
