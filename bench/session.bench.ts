/**
 * Issue 30: what a coding session costs beyond its git floor, and how fast `pulse session list`
 * starts.
 *
 * Per iteration: a session in process (SQLite-free memory records, the scripted driver, whose
 * turn appends a line to a file through a shell, so every iteration has work to commit), timed
 * from one iteration.started event to the next, beside the same turn and the git commands such an
 * iteration needs (status at the start, status after the turn, add, commit and its sha, then status,
 * log, diff of the names committed and numstat) run by one shell, interleaved. Cold start:
 * `pulse session list` beside `node -e ''`.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { MemorySessionRecords } from "../adapters/memory/session-records.js";
import { ScriptedDriver } from "../adapters/agents/scripted/scripted-driver.js";
import { createRuntime } from "../src/embedded.js";
import { Notifier } from "../src/coding/notifier.js";
import { loadSessionProfile } from "../src/coding/session/profile.js";
import { SessionRunner } from "../src/coding/session/runner.js";
import { commandMs, median, report } from "./measure.js";

const ITERATIONS = 12;
const ROUNDS = Number(process.env.ROUNDS ?? 5);
const TURN = "echo line >> work.txt";
const root = new URL("../../", import.meta.url).pathname;

function repo(): string {
  const dir = mkdtempSync(join(os.tmpdir(), "pulse-bench-session-"));
  const g = (...args: string[]) => spawnSync("git", args, { cwd: dir, stdio: "ignore" });
  g("init", "-q", "-b", "main");
  g("config", "user.email", "dev@example.org");
  g("config", "user.name", "Dev");
  spawnSync("sh", ["-c", "echo '# app' > README.md"], { cwd: dir });
  g("add", "-A");
  g("commit", "-q", "-m", "initial");
  return dir;
}

const profile = loadSessionProfile();
const runner = await SessionRunner.create({
  runtime: await createRuntime(),
  records: new MemorySessionRecords(),
  profile,
  driverFor: () => new ScriptedDriver({ mode: "repeat-last", steps: [{ shell: [TURN], text: "Appended a line. <signal>CONTINUE</signal>" }] }),
  notifier: new Notifier([]),
});
const records = (runner as unknown as { o: { records: MemorySessionRecords } }).o.records;

/** ms per iteration of a session, from the first iteration.started to the end (setup excluded). */
async function pulseIterations(): Promise<number> {
  const dir = repo();
  try {
    const id = crypto.randomUUID();
    await records.create({ id, project_name: "bench", goal: "append lines", max_iterations: ITERATIONS + 1, repo_path: dir, worktree_path: null, driver: { name: "scripted" }, context_strategy: "none", created_by: "cli" } as never);
    const started: number[] = [];
    const final = await runner.run(id, { onEvent: (e) => void (e.type === "iteration.started" && started.push(performance.now())) });
    if (started.length < 3) throw new Error(`the session ran ${started.length} iteration(s): ${JSON.stringify(final).slice(0, 600)}`);
    const end = performance.now();
    // The first iteration also pays for the session's start: measure from the second one.
    return (end - started[1]!) / (started.length - 1);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const FLOOR = [
  "S='status --porcelain=v2 --branch --no-ahead-behind -z --untracked-files=all'",
  "base=$(git rev-parse HEAD)",
  `for i in $(seq ${ITERATIONS}); do`,
  "  git $S >/dev/null",
  `  ${TURN}`,
  "  git $S >/dev/null",
  "  git add -A && git commit -q --no-verify -m \"iteration $i\"",
  "  head=$(git rev-parse HEAD)",
  "  git $S >/dev/null",
  "  git log --format=%H%x00%s $base..HEAD >/dev/null",
  "  git diff --name-only -z $base HEAD >/dev/null",
  "  git diff --numstat -z $base >/dev/null",
  "  base=$head",
  "done",
].join("\n");

/** ms per iteration of the floor: the turn and the git commands, from one shell. */
function bareIterations(): number {
  const dir = repo();
  try {
    const start = performance.now();
    const r = spawnSync("sh", ["-c", FLOOR], { cwd: dir, stdio: "ignore" });
    if (r.status !== 0) throw new Error(`the floor's shell exited with ${r.status}`);
    return (performance.now() - start) / ITERATIONS;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const pulse: number[] = [];
const bare: number[] = [];
await pulseIterations(); // warm-up
bareIterations();
for (let r = 0; r < ROUNDS; r++) {
  pulse.push(await pulseIterations());
  bare.push(bareIterations());
}
const ratio = median(pulse) / median(bare);
const ratios = pulse.map((p, i) => p / bare[i]!).sort((a, b) => a - b);

const cwd = mkdtempSync(join(os.tmpdir(), "pulse-bench-list-"));
const store = join(cwd, "pulse.db");
const cold = commandMs({ node: [process.execPath, "-e", ""], list: [process.execPath, join(root, "dist/bin/pulse.mjs"), "session", "list", "--store", store] }, 15, cwd);
rmSync(cwd, { recursive: true, force: true });
const coldRatio = cold.list! / cold.node!;

report({
  title: "Coding session: an iteration beside its git floor, and pulse session list's start",
  rows: [
    { name: "pulse session iteration (scripted turn, auto-commit), ms", value: median(pulse).toFixed(1) },
    { name: "the same turn + git commands from one shell, ms", value: median(bare).toFixed(1) },
    { name: "ratio pulse / floor (median; rounds' range)", value: `${ratio.toFixed(2)}× (${ratios[0]!.toFixed(2)}–${ratios.at(-1)!.toFixed(2)}×)` },
    { name: "node -e '' / pulse session list, ms", value: `${cold.node!.toFixed(1)} / ${cold.list!.toFixed(1)}` },
    { name: "ratio pulse session list / node -e ''", value: `${coldRatio.toFixed(2)}×` },
    { name: "load average when run (2 cores)", value: os.loadavg()[0]!.toFixed(1) },
  ],
  target: "an iteration ≤ 1.3× its git floor; pulse session list ≤ 1.8× node -e ''",
  met: ratio <= 1.3 && coldRatio <= 1.8,
});
