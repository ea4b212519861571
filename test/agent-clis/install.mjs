#!/usr/bin/env node
// Installs the real agent CLIs (test/agent-clis/package.json, pinned, locked) into a cache folder
// keyed by the lock file's hash, so CI and every worktree install them once. Prints the folder.
// Test-only: pulse itself never depends on these packages.
//
//   node test/agent-clis/install.mjs          install if missing, print the bin folder
//   node test/agent-clis/install.mjs --check  exit 1 when not installed (installs nothing)
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const lock = readFileSync(join(here, "package-lock.json"));
const manifest = readFileSync(join(here, "package.json"));
const key = createHash("sha256").update(manifest).update(lock).digest("hex").slice(0, 16);
const root = process.env.PULSE_AGENT_CLIS_CACHE ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "pulse", "agent-clis");
const dir = join(root, key);
const done = join(dir, ".installed");

if (existsSync(done)) {
  process.stdout.write(join(dir, "node_modules", ".bin") + "\n");
  process.exit(0);
}
if (process.argv.includes("--check")) process.exit(1);

// Install beside the final folder and rename, so an interrupted install never looks complete.
const staging = `${dir}.partial-${process.pid}`;
rmSync(staging, { recursive: true, force: true });
mkdirSync(staging, { recursive: true });
copyFileSync(join(here, "package.json"), join(staging, "package.json"));
copyFileSync(join(here, "package-lock.json"), join(staging, "package-lock.json"));
process.stderr.write(`installing the agent CLIs into ${dir} (about 1.2 GB, once per lock file)\n`);
// claude-code and opencode-ai put their platform binary in place from an install script: the
// allowScripts field of package.json lets those two (pinned) run and no other. `npm install`
// with the lock rather than `npm ci`: npm leaves other platforms' optional packages out of a lock
// written on Linux and `npm ci` then calls the lock out of sync; the versions are the lock's.
const r = spawnSync("npm", ["install", "--no-audit", "--no-fund", "--no-save"], { cwd: staging, stdio: ["ignore", "inherit", "inherit"] });
if (r.status !== 0) {
  rmSync(staging, { recursive: true, force: true });
  process.stderr.write(`npm install of the agent CLIs failed (exit ${r.status ?? r.signal})\n`);
  process.exit(1);
}
writeFileSync(join(staging, ".installed"), new Date().toISOString() + "\n");
rmSync(dir, { recursive: true, force: true });
renameSync(staging, dir);
process.stdout.write(join(dir, "node_modules", ".bin") + "\n");
