/**
 * Every shell command in the README and docs/ runs as written, in a fresh copy of the repository
 * (its tracked and new files, with this checkout's installed node_modules and a copy of its
 * built dist/), as a reader would paste it: block by block per document, each block in one
 * shell, so a key made by one command is there for the next. A command that runs until Ctrl-C
 * gets a few seconds, then Ctrl-C (SIGINT), and must then exit 0 (or 130, as Ctrl-C leaves npx);
 * every other command must exit 0, within two minutes. A command sent to the background (`&`)
 * must be listening on its --port within 30 s. Ports a document names are moved to free ones
 * (the same one throughout the document), so a busy 8080 fails nothing.
 *
 * Not run, and said so: `npm ci` (this suite runs in an installed checkout; CI runs npm ci
 * itself) and `npm test` (this suite: CI runs it). A document's code that is only an
 * illustration (placeholders such as your own adapter) is fenced as ```text.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { createServer, connect } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readCommands, type DocCommand } from "./fenced-commands.js";
import { itWhen } from "../helpers/requires.js";

const ROOT = resolve(import.meta.dirname, "../..");
const CI = process.env.CI === "true";
const STOP_AFTER_MS = 5_000;
const LIMIT_MS = 120_000;
const TOOLS = ["jq", "openssl", "curl", "python3", "sha256sum", "base64"];

const commands = readCommands(ROOT);
const byFile = new Map<string, DocCommand[]>();
for (const c of commands) byFile.set(c.file, [...(byFile.get(c.file) ?? []), c]);

const missingTools = TOOLS.filter((t) => spawnSync("sh", ["-c", `command -v ${t}`]).status !== 0);
const background: ChildProcess[] = [];
const projects: string[] = [];
// Each document's copy holds the repository and a built dist/: removing them all can take longer
// than a hook's default 30 s on a loaded machine, which would fail a suite whose tests passed.
afterAll(async () => {
  for (const child of background) killGroup(child, "SIGKILL");
  await Promise.all(projects.map((dir) => rm(dir, { recursive: true, force: true, maxRetries: 3 })));
}, 180_000);

/** The repository as a fresh clone has it, plus this checkout's installed dependencies and build. */
function freshCopy(): string {
  const dir = mkdtempSync(join(tmpdir(), "pulse-docs-"));
  projects.push(dir);
  const listed = spawnSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], { cwd: ROOT, encoding: "utf8" });
  if (listed.status !== 0) throw new Error(`git ls-files failed: ${listed.stderr}`);
  for (const file of listed.stdout.split("\0").filter(Boolean)) {
    const target = join(dir, file);
    mkdirSync(dirname(target), { recursive: true });
    try {
      cpSync(join(ROOT, file), target);
    } catch {
      // Deleted in the working tree but not yet in the index: a fresh clone would not have it either.
    }
  }
  symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"));
  // Copied, so nothing a command writes there reaches this checkout.
  cpSync(join(ROOT, "dist"), join(dir, "dist"), { recursive: true });
  // `npx pulse…` in a clone runs the project's own bin. npm's bookkeeping around that costs
  // seconds per call and, when it finds node_modules newer than its lockfile (as after a test
  // run), reinstalls the project and rebuilds dist/ under the running tests. The shim runs the
  // bin npx would run, and hands every other name to npx (test/package-install.test.ts runs the
  // real npx on an installed package).
  const bin = join(dir, ".doc-bin");
  mkdirSync(bin);
  const npx = spawnSync("sh", ["-c", "command -v npx"], { encoding: "utf8" }).stdout.trim();
  writeFileSync(
    join(bin, "npx"),
    `#!/bin/sh\ncase "$1" in\n  pulse|pulse-validate|pulse-diagram|pulse-conform) b="$1"; shift; exec node "${dir}/dist/bin/$b.mjs" "$@";;\nesac\nexec ${npx} "$@"\n`,
    { mode: 0o755 },
  );
  return dir;
}

async function freePort(): Promise<number> {
  return new Promise((done) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });
}

/** Ports named in a document's commands, each mapped to a free one. */
async function portMap(list: readonly DocCommand[]): Promise<Map<string, string>> {
  const ports = new Set<string>();
  for (const c of list) for (const m of c.text.matchAll(/(?:127\.0\.0\.1:|localhost:|--port[ =])(\d{4,5})\b/g)) ports.add(m[1]!);
  const map = new Map<string, string>();
  for (const p of ports) map.set(p, String(await freePort()));
  return map;
}

function rewrite(text: string, ports: Map<string, string>): string {
  let out = text;
  for (const [from, to] of ports) out = out.replace(new RegExp(`\\b${from}\\b`, "g"), to);
  return out;
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    if (child.pid) process.kill(-child.pid, signal);
  } catch {
    // Already gone.
  }
}

const runsUntilStopped = (text: string) => (/\bpulse run\b/.test(text) && !/--once|--iterations/.test(text)) || /\bsubstrate serve\b/.test(text);

/** The environment a reader's shell has: none of npm's or vitest's variables (npm_config_local_prefix would point npx at this checkout). */
const ENV = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(npm_|VITEST|INIT_CWD$|NODE_ENV$|TEST$)/.test(k)));

/**
 * A block as one bash script, so its commands share variables, stopping at the first failure:
 * a command that runs until Ctrl-C is given SIGINT after a few seconds (and may then exit 0 or
 * 130, as Ctrl-C leaves it); a command sent to the background is waited for until its --port
 * listens. The failing command's line is reported.
 */
function script(list: readonly DocCommand[], ports: Map<string, string>): string {
  const out = ["set -e -o pipefail", "__line=0", `trap 'rc=$?; [ $rc -ne 0 ] && echo "::failed line $__line, exit $rc" >&2' EXIT`];
  for (const c of list) {
    // The install the reader does first is this checkout's own.
    const text = rewrite(c.text.replace(/^npm ci && /, ""), ports);
    out.push(`__line=${c.line}`);
    if (/&\s*(#.*)?$/.test(text)) {
      // Its output goes to a file: it must not hold this script's pipes open after the script ends.
      out.push(`${text.replace(/&\s*(#.*)?$/, "")} > .background-${c.line}.log 2>&1 &`);
      const port = /--port[ =](\d+)/.exec(text)?.[1];
      if (port) out.push(`for i in $(seq 300); do (exec 3<>/dev/tcp/127.0.0.1/${port}) 2>/dev/null && break; sleep 0.1; done; (exec 3<>/dev/tcp/127.0.0.1/${port}) 2>/dev/null || { echo "nothing listens on ${port} after 30 s" >&2; exit 1; }`);
    } else if (runsUntilStopped(text)) {
      out.push(`timeout --preserve-status -k 15 -s INT ${STOP_AFTER_MS / 1000} bash -o pipefail -c ${shellQuote(text)} || [ $? -eq 130 ]`);
    } else {
      out.push(text);
    }
  }
  return out.join("\n") + "\n";
}

const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

function run(text: string, cwd: string): Promise<{ code: number | null; output: string; ms: number }> {
  const started = Date.now();
  const env = { ...ENV, PATH: `${join(cwd, ".doc-bin")}:${ENV.PATH ?? ""}` };
  const child = spawn("bash", ["-c", text], { cwd, detached: true, env, stdio: ["ignore", "pipe", "pipe"] });
  background.push(child);
  let output = "";
  child.stdout!.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (output += d.toString()));
  const limit = setTimeout(() => killGroup(child, "SIGKILL"), LIMIT_MS);
  return new Promise((done) => {
    child.on("close", (code) => {
      clearTimeout(limit);
      done({ code, output, ms: Date.now() - started });
    });
  });
}

async function waitForPort(port: number, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    const open = await new Promise<boolean>((done) => {
      const socket = connect(port, "127.0.0.1", () => (socket.end(), done(true)));
      socket.on("error", () => done(false));
    });
    if (open) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}

/** Why a command is not run here, or undefined. */
function notRun(text: string): string | undefined {
  if (/^(npm ci && )?npm test\b/.test(text.trim())) return "npm test is this suite (CI runs it)";
  const tool = missingTools.find((t) => new RegExp(`(^|[\\s|;&(])${t}\\b`).test(text));
  if (tool && !CI) return `${tool} is not installed here (.ci/run installs it; under CI=true this fails)`;
  return undefined;
}

describe("the docs' commands", () => {
  it("are found: the README's install and validate commands among them", () => {
    expect(commands.find((c) => c.file === "README.md" && c.text.startsWith("npm ci && npx pulse run"))).toBeDefined();
    expect(commands.filter((c) => c.file === "README.md").length).toBeGreaterThan(8);
  });

  itWhen(CI, "only checked under CI=true", "skip")("find every tool they use installed under CI=true (.ci/run installs them)", () => {
    expect(missingTools).toEqual([]);
  });
});

for (const [file, list] of byFile) {
  const blocks = new Map<number, DocCommand[]>();
  for (const c of list) blocks.set(c.block, [...(blocks.get(c.block) ?? []), c]);

  describe.sequential(file, () => {
    let project = "";
    let ports = new Map<string, string>();

    it("gets a fresh copy of the repository", async () => {
      project = freshCopy();
      ports = await portMap(list);
    });

    for (const [line, commands] of blocks) {
      const skipped = commands.map((c) => ({ c, reason: notRun(c.text) })).filter((x) => x.reason !== undefined);
      const runnable = commands.filter((c) => notRun(c.text) === undefined);
      const title = `${file}:${line}: ${runnable.map((c) => c.text.split("\n")[0]!.replace(/\s+#.*$/, "")).join(" ; ").slice(0, 110)}`;
      const note = skipped.map((x) => ` (not run: ${x.c.text.split("\n")[0]}: ${x.reason})`).join("");
      it.skipIf(runnable.length === 0)(`${title}${note}`, async () => {
        const r = await run(script(runnable, ports), project);
        const tail = r.output.split("\n").slice(-20).join("\n");
        expect(r.code, `${title}\nexit ${r.code} after ${r.ms} ms:\n${tail}`).toBe(0);
      }, LIMIT_MS + 30_000);
    }
  });
}
