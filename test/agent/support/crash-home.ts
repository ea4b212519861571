/**
 * For crash-and-resume tests: a home whose `tick` action (a real action directory) sleeps, then
 * appends `N actionRunId` to the workdir's ticks.log (its pid to pids.log first), and a loopback
 * OpenAI-compatible chat API that plans N ticks and decides from the plan in the prompt (the
 * first pending or failed step): it answers a resumed run as it answered the first, whatever
 * happened in between. `pulse agent` runs as a real process beside the test (spawned, never
 * blocking the mock).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "../../cli/run-bin.js";

const TICK = `const { appendFileSync } = require("node:fs");
const { join } = require("node:path");
class Perform {
  constructor(agent) { this.agent = agent; }
  async run({ n, ms }) {
    appendFileSync(join(this.agent.workdir, "pids.log"), process.pid + "\\n");
    await new Promise((r) => setTimeout(r, ms));
    appendFileSync(join(this.agent.workdir, "ticks.log"), n + " " + this.agent.actionRunId + "\\n");
    return { status: "ok", result: "tick " + n };
  }
}
module.exports = { Perform };
`;

export interface ChatMock {
  url: string;
  calls: { role: "planner" | "decider"; prompt: string }[];
  close(): Promise<void>;
}

/** Plans `steps` ticks; decides the first step not done, each tick sleeping `tickMs`. */
export async function startPlanningMock(steps: number, tickMs: number): Promise<ChatMock> {
  const mock = { calls: [] } as unknown as ChatMock;
  const server = createServer((req, res) => {
    let raw = "";
    req.on("data", (c) => (raw += c));
    req.on("end", () => {
      const body = JSON.parse(raw || "{}") as { messages?: { content: string }[] };
      const prompt = (body.messages ?? []).map((m) => m.content).join("\n");
      let answer: unknown;
      if (prompt.includes("You are the planner")) {
        mock.calls.push({ role: "planner", prompt });
        answer = { steps: Array.from({ length: steps }, (_, i) => ({ id: `s${i + 1}`, desc: `tick ${i + 1}` })) };
      } else {
        mock.calls.push({ role: "decider", prompt });
        const open = /- \[(pending|failed|running)\] s(\d+):/.exec(prompt);
        answer = open ? { type: "execute", action: { name: "tick", args: { n: Number(open[2]), ms: tickMs } }, step: `s${open[2]}`, reason: "the next tick" } : { type: "terminate", reason: "all ticks done" };
      }
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ id: "c", model: "mock", choices: [{ index: 0, message: { role: "assistant", content: JSON.stringify(answer) }, finish_reason: "stop" }], usage: { prompt_tokens: 40, completion_tokens: 10 } }));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  mock.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  mock.close = () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r())));
  return mock;
}

export function crashHome(chatUrl: string, execution: Record<string, unknown> = {}): { home: string; workdir: string } {
  const home = mkdtempSync(join(tmpdir(), "pulse-agent-crash-"));
  const workdir = mkdtempSync(join(tmpdir(), "pulse-agent-crash-work-"));
  mkdirSync(join(home, "actions", "tick"), { recursive: true });
  writeFileSync(join(home, "actions", "tick", "meta.json"), JSON.stringify({ name: "tick", description: "Tick once: wait, then write the tick down", arguments: [{ name: "n", type: "integer", required: true }, { name: "ms", type: "integer", required: true }], timeout_sec: 30 }));
  writeFileSync(join(home, "actions", "tick", "perform.js"), TICK);
  writeFileSync(join(home, "config.json"), JSON.stringify({ llm: [{ alias: "default", provider: "openai_compatible", baseUrl: chatUrl, model: "mock", apiKey: "x", maxRetries: 0 }], roles: { planner: "default", decider: "default" }, execution: { execution_mode: "auto", ...execution } }));
  return { home, workdir };
}

export interface Proc {
  child: ChildProcess;
  stdout: string;
  stderr: string;
  done: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** `pulse agent …` as a real process (the built bin), its own process group. */
export function pulse(args: string[], home: string, workdir: string): Proc {
  const child = spawn(process.execPath, [join(ROOT, "dist/bin/pulse.mjs"), "agent", ...args, "--home", home, "--workdir", workdir], { cwd: workdir, env: { PATH: process.env.PATH ?? "", HOME: home }, stdio: ["ignore", "pipe", "pipe"] });
  const p = { child, stdout: "", stderr: "" } as Proc;
  child.stdout!.on("data", (d) => (p.stdout += d));
  child.stderr!.on("data", (d) => (p.stderr += d));
  p.done = new Promise((resolve) => child.on("close", (code, signal) => resolve({ code, signal })));
  return p;
}
