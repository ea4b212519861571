/**
 * Issue 16: what the CLI driver adds to one agent call, beside a bare child_process.spawn of the
 * same CLI with the same arguments and environment, interleaved in one run. Two phases: spawn to
 * the first event (driver: the first parsed AgentEvent; bare: the first stdout byte) and the
 * rest, to the result (driver: the AgentResult; bare: the pipes closed). The fake agent CLI
 * (claude stream format) isolates the driver's own cost; the real claude CLI against the mock
 * model server on loopback, when test/agent-clis is installed, shows it against a real agent.
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CliDriver } from "../adapters/agents/cli/cli-driver.js";
import { buildEnv } from "../adapters/agents/cli/env.js";
import { BUILTIN_PRESETS } from "../adapters/agents/cli/presets.js";
import { startMockModelServer } from "../test/agents/support/mock-model-server.js";
import { median, report } from "./measure.js";

const root = new URL("../..", import.meta.url).pathname;
const workspace = mkdtempSync(join(tmpdir(), "pulse-bench-agent-"));

interface Sample {
  first: number;
  rest: number;
}

async function viaDriver(driver: CliDriver): Promise<Sample> {
  const t0 = performance.now();
  let first = 0;
  const r = await driver.run({ prompt: "Create hello.txt.", cwd: workspace }, { onEvent: () => void (first ||= performance.now() - t0) });
  if (r.status !== "ok") throw new Error(`driver run failed: ${r.status} ${r.error?.message}`);
  const total = performance.now() - t0;
  return { first, rest: total - first };
}

function bare(command: string, args: string[], env: Record<string, string>): Promise<Sample> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    let first = 0;
    const child = spawn(command, args, { cwd: workspace, env, stdio: ["ignore", "pipe", "pipe"] });
    child.stdout.on("data", () => void (first ||= performance.now() - t0));
    child.stderr.resume();
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve({ first, rest: performance.now() - t0 - first }) : reject(new Error(`bare run exited ${code}`))));
  });
}

async function compare(label: string, driver: CliDriver, command: string, args: string[], env: Record<string, string>, runs: number) {
  const d: Sample[] = [];
  const b: Sample[] = [];
  await viaDriver(driver); // warm the file cache
  await bare(command, args, env);
  for (let i = 0; i < runs; i++) {
    d.push(await viaDriver(driver));
    b.push(await bare(command, args, env));
  }
  const m = (xs: Sample[], k: keyof Sample) => median(xs.map((x) => x[k]));
  const dt = m(d, "first") + m(d, "rest");
  const bt = m(b, "first") + m(b, "rest");
  return {
    overheadMs: dt - bt,
    ratio: dt / bt,
    rows: [
      { name: `${label}: spawn → first event, driver / bare`, value: `${m(d, "first").toFixed(1)} ms / ${m(b, "first").toFixed(1)} ms` },
      { name: `${label}: first event → result, driver / bare`, value: `${m(d, "rest").toFixed(1)} ms / ${m(b, "rest").toFixed(1)} ms` },
      { name: `${label}: whole call, driver / bare`, value: `${dt.toFixed(1)} ms / ${bt.toFixed(1)} ms (${(dt / bt).toFixed(2)}×, +${(dt - bt).toFixed(1)} ms)` },
    ],
  };
}

const parentEnv = { PATH: process.env.PATH, HOME: process.env.HOME };
const results: Awaited<ReturnType<typeof compare>>[] = [];

// (a) the fake agent: what the driver itself costs.
const fake = join(root, "test/agents/fixtures/fake-agent.mjs");
const fakeDriver = new CliDriver(BUILTIN_PRESETS.claude!, { command: fake, parentEnv });
const fakeArgs = [...BUILTIN_PRESETS.claude!.args, "Create hello.txt."];
results.push(await compare("fake agent CLI", fakeDriver, fake, fakeArgs, buildEnv({ parent: parentEnv, passThrough: [], set: {}, cwd: workspace }), 25));

// (b) the real claude against the mock model, when the test-only CLIs are installed.
const clis = spawnSync(process.execPath, [join(root, "test/agent-clis/install.mjs"), "--check"], { encoding: "utf8" });
if (clis.status === 0) {
  const claude = join(clis.stdout.trim(), "claude");
  const mock = await startMockModelServer();
  mock.setTask({ workspace, file: "hello.txt", content: "hello\n", finalText: "Done. <signal>COMPLETE</signal>" });
  const home = mkdtempSync(join(tmpdir(), "pulse-bench-home-"));
  const endpoint = { baseUrl: mock.url, model: "claude-sonnet-4-5" };
  const realDriver = new CliDriver(BUILTIN_PRESETS.claude!, { command: claude, endpoint, homeDir: home, parentEnv });
  const env = buildEnv({
    parent: parentEnv,
    passThrough: [],
    privateHome: home,
    cwd: workspace,
    set: { IS_SANDBOX: "1", ANTHROPIC_BASE_URL: mock.url, ANTHROPIC_API_KEY: "pulse-no-key", ANTHROPIC_MODEL: endpoint.model, ANTHROPIC_SMALL_FAST_MODEL: endpoint.model, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1" },
  });
  results.push(await compare("claude 2.1.197 + mock model", realDriver, claude, [...BUILTIN_PRESETS.claude!.args, "Create hello.txt."], env, 7));
  await mock.close();
  rmSync(home, { recursive: true, force: true });
}
rmSync(workspace, { recursive: true, force: true });

const worst = results.reduce((a, r) => Math.max(a, r.overheadMs), 0);
report({
  title: "Agent driver overhead per call: CLI driver vs bare child_process.spawn of the same CLI",
  rows: results.flatMap((r) => r.rows),
  target: "driver overhead per call ≤ 25 ms (median, whole call)",
  met: worst <= 25,
});
