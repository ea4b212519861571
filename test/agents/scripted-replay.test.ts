import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { recordingDriver, replayDriver } from "../../adapters/agents/record/record-replay.js";
import { loadScript } from "../../adapters/agents/scripted/script.js";
import { ScriptedDriver } from "../../adapters/agents/scripted/scripted-driver.js";
import type { AgentEvent } from "../../src/agents/contract.js";
import { collectEvidence, startEvidence } from "../../src/coding/evidence.js";
import { fakeDriver, tempDir } from "./support/fake-agent.js";

let repo: ReturnType<typeof tempDir>;
const git = (...a: string[]) => execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...a], { cwd: repo.path, encoding: "utf8" }).trim();
beforeEach(() => {
  repo = tempDir("pulse-scripted-");
  git("init", "-q");
  git("commit", "-q", "--allow-empty", "-m", "start");
});
afterEach(() => repo.cleanup());
const req = (iteration: number, extra: object = {}) => ({ prompt: "go", cwd: repo.path, loopId: "coding.pulse_session", phaseId: "dispatch_agent", iteration, ...extra });

describe("scripted driver", () => {
  it("matches steps on loop, phase and iteration, with real file effects, shell and commits", async () => {
    const d = new ScriptedDriver({
      mode: "strict",
      steps: [
        { match: { iteration: 2 }, text: "second <signal>COMPLETE</signal>", files: { "README.md": null }, commit: "chore: remove readme" },
        { match: { loop: "coding.pulse_session", iteration: 1 }, text: "first <signal>CONTINUE</signal>", files: { "README.md": "# hi\n", "src/a.ts": "export {};\n" }, shell: ["echo built > build.log"], commit: "feat: start", usage: { inputTokens: 10, outputTokens: 5 }, costUsd: 0.01, toolCalls: [{ name: "pulse_signal", arguments: { signal: "CONTINUE" } }] },
      ],
    });
    const events: AgentEvent[] = [];
    const start = await startEvidence(repo.path);
    const one = await d.run(req(1), { onEvent: (e) => events.push(e) });
    expect(one).toMatchObject({ status: "ok", text: "first <signal>CONTINUE</signal>", usage: { inputTokens: 10, outputTokens: 5 }, costUsd: 0.01 });
    expect(events.map((e) => e.type)).toEqual(["session", "text", "tool_call", "usage"]);
    expect(git("log", "-1", "--format=%s")).toBe("feat: start");
    expect((await collectEvidence(repo.path, start)).filesChanged).toEqual(["README.md", "build.log", "src/a.ts"]);
    expect((await d.run(req(2))).text).toMatch(/COMPLETE/);
    expect(existsSync(join(repo.path, "README.md"))).toBe(false);
    const third = await d.run(req(3));
    expect(third).toMatchObject({ status: "error", error: { message: expect.stringMatching(/no step left for this call \(loop coding.pulse_session, phase dispatch_agent, iteration 3\)/) } });
  });

  it("repeat-last answers again with the last step; outcomes timeout, crash, rate_limit, max_turns", async () => {
    const d = new ScriptedDriver({ mode: "repeat-last", steps: [{ outcome: "rate_limit", retryAfterMs: 5000 }] });
    expect(await d.run(req(1))).toMatchObject({ status: "rate_limited", retryAfterMs: 5000 });
    expect(await d.run(req(2))).toMatchObject({ status: "rate_limited" });
    const outcomes = new ScriptedDriver({ steps: [{ outcome: "timeout" }, { outcome: "crash", error: "segfault", files: { "half.txt": "x" } }, { outcome: "max_turns", text: "still going" }] });
    expect((await outcomes.run(req(1))).status).toBe("timeout");
    expect(await outcomes.run(req(2))).toMatchObject({ status: "error", error: { message: "segfault" } });
    expect(existsSync(join(repo.path, "half.txt"))).toBe(true); // a crash after writing leaves its work, like a real one
    expect((await outcomes.run(req(3))).status).toBe("max_turns");
  });

  it("hang waits for the timeout or the abort; delays are abortable", async () => {
    const d = new ScriptedDriver({ steps: [{ outcome: "hang" }, { outcome: "hang" }, { delayMs: 60_000, text: "late" }] });
    expect((await d.run(req(1, { timeoutMs: 100 }))).status).toBe("timeout");
    const c = new AbortController();
    setTimeout(() => c.abort(), 50);
    expect((await d.run(req(2), { signal: c.signal })).status).toBe("aborted");
    const c2 = new AbortController();
    setTimeout(() => c2.abort(), 50);
    expect((await d.run(req(3), { signal: c2.signal })).status).toBe("aborted");
  });

  it("file effects are confined to the workspace", async () => {
    const d = new ScriptedDriver({ steps: [{ files: { "../escape.txt": "x" } }] });
    expect(await d.run(req(1))).toMatchObject({ status: "error", error: { message: expect.stringMatching(/outside the workspace/) } });
  });

  it("a script file with a mistake is refused, naming the step and field", () => {
    const bad = join(repo.path, "bad.yaml");
    writeFileSync(bad, "steps:\n  - text: ok\n  - outcome: explode\n");
    expect(() => loadScript(bad)).toThrow(`${bad}: steps[1].outcome: must be one of ok, timeout, crash, hang, rate_limit, max_turns, got "explode"`);
    writeFileSync(bad, '{"steps": [ {"txt": 1} ]}');
    expect(() => loadScript(bad)).toThrow(/steps\[0\]\.txt: unknown field/);
    writeFileSync(bad, "steps: [\n");
    expect(() => loadScript(bad)).toThrow(/bad\.yaml: \d+:\d+: /);
    writeFileSync(bad, '{"mode": "repeat-last", "steps": [{"text": "<signal>CONTINUE</signal>", "match": {"iteration": 1}}]}');
    expect(loadScript(bad).steps).toHaveLength(1);
  });
});

describe("record and replay", () => {
  it("records a CLI driver's calls (events, result, git effects) and replays them without the agent", async () => {
    const file = join(repo.path, "..", `rec-${Date.now()}.jsonl`);
    try {
      const recorded = recordingDriver(fakeDriver({ FAKE_AGENT_WRITE: "made.txt:made by the agent", FAKE_AGENT_SESSION: "s-rec" }), file);
      const events: string[] = [];
      const original = await recorded.run(req(1), { onEvent: (e) => events.push(e.type) });
      expect(original.status).toBe("ok");
      const line = JSON.parse(readFileSync(file, "utf8").trim()) as { effects: { uncommitted: Record<string, string> } };
      expect(line.effects.uncommitted).toEqual({ "made.txt": "made by the agent" });

      // A fresh workspace: the replay writes the effects back, events and result are the same.
      repo.cleanup();
      repo = tempDir("pulse-replay-");
      git("init", "-q");
      git("commit", "-q", "--allow-empty", "-m", "start");
      const replay = replayDriver(file);
      const replayed: string[] = [];
      const r = await replay.run(req(1), { onEvent: (e) => replayed.push(e.type) });
      expect(replayed).toEqual(events);
      expect(r).toMatchObject({ status: "ok", sessionId: "s-rec", text: original.text, usage: original.usage });
      expect(readFileSync(join(repo.path, "made.txt"), "utf8")).toBe("made by the agent");
      expect(replay.remaining()).toBe(0);
      expect((await replay.run(req(2))).error?.message).toMatch(/no call left/);
    } finally {
      execFileSync("rm", ["-f", file]);
    }
  });

  it("replays a scripted run with commits; a call for another iteration is refused", async () => {
    const file = join(repo.path, "..", `rec2-${Date.now()}.jsonl`);
    try {
      const rec = recordingDriver(new ScriptedDriver({ steps: [{ files: { "a.txt": "a" }, commit: "feat: a", text: "t" }] }), file);
      await rec.run(req(1));
      const replay = replayDriver(file);
      expect((await replay.run(req(7))).error?.message).toMatch(/recorded for iteration 1, not 7/);
      const fresh = tempDir("pulse-replay2-");
      try {
        execFileSync("git", ["init", "-q"], { cwd: fresh.path });
        execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "s"], { cwd: fresh.path });
        await replay.run({ ...req(1), cwd: fresh.path });
        expect(execFileSync("git", ["log", "-1", "--format=%s"], { cwd: fresh.path, encoding: "utf8" }).trim()).toBe("feat: a");
      } finally {
        fresh.cleanup();
      }
      writeFileSync(file, "not json\n");
      expect(() => replayDriver(file)).toThrow(/:1: /);
    } finally {
      execFileSync("rm", ["-f", file]);
    }
  });
});
