import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

/** A real git repository in a temporary folder, with one commit. */
export function tempRepo(): { path: string; git: (...args: string[]) => string; write: (file: string, content: string) => void; commit: (message: string) => string; cleanup: () => void } {
  const path = mkdtempSync(join(tmpdir(), "pulse-kit-repo-"));
  const git = (...args: string[]) => execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd: path, encoding: "utf8" }).trim();
  const write = (file: string, content: string) => {
    mkdirSync(dirname(join(path, file)), { recursive: true });
    writeFileSync(join(path, file), content);
  };
  git("init", "-q", "-b", "main");
  write("README.md", "# demo\n");
  git("add", "-A");
  git("commit", "-q", "-m", "initial");
  return {
    path,
    git,
    write,
    commit: (message) => {
      git("add", "-A");
      git("commit", "-q", "-m", message);
      return git("rev-parse", "HEAD");
    },
    cleanup: () => rmSync(path, { recursive: true, force: true }),
  };
}
