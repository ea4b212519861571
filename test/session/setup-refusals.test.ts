/**
 * Setup refused before anything is recorded (the built bin, real git repositories): a missing
 * agent CLI, an unknown driver, openai without its endpoint, a bad presets file, a missing
 * script are each exit 2 with one line naming the flag, and `pulse session list` stays empty;
 * each near miss is accepted and recorded. --no-color and NO_COLOR are accepted everywhere.
 */
import { chmodSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runBin } from "../cli/run-bin.js";
import { gitRepo, removeDir, worktreesRoot } from "./helpers.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) removeDir(d);
});

function setup() {
  const repo = gitRepo();
  const bin = mkdtempSync(join(tmpdir(), "pulse-path-"));
  dirs.push(repo, bin);
  const script = join(bin, "script.json");
  writeFileSync(script, JSON.stringify({ steps: [{ text: "<signal>COMPLETE</signal>" }] }));
  const store = join(repo, ".pulse", "pulse.db");
  const pulse = (args: string[], env: Record<string, string> = {}) => runBin("pulse", ["session", ...args, "--store", store], { cwd: repo, env: { HOME: repo, PULSE_WORKTREES: worktreesRoot(), PATH: `${bin}:/usr/bin:/bin`, ...env } });
  const sessions = () => JSON.parse(pulse(["list", "--json"]).stdout) as { status: string; last_signal: string | null }[];
  return { repo, bin, script, pulse, sessions };
}

describe("pulse session start refuses what could not run, leaving no record", () => {
  it("a missing agent CLI: exit 2 before the first turn; with the CLI on PATH the session is recorded", () => {
    const { bin, pulse, sessions } = setup();
    const r = pulse(["start", "--goal", "x", "--max-iterations", "1"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe("pulse session: --driver: claude is not installed (not on PATH): install it (npm i -g @anthropic-ai/claude-code) or choose --driver (pulse drivers lists them)\n");
    expect(sessions()).toEqual([]);
    // The near miss: a `claude` on PATH (one that fails at once) is accepted; its failed turn has no signal.
    writeFileSync(join(bin, "claude"), "#!/bin/sh\necho 'boom' >&2\nexit 1\n");
    chmodSync(join(bin, "claude"), 0o755);
    const ok = pulse(["start", "--goal", "x", "--max-iterations", "1"]);
    expect(ok.code, ok.stderr).toBe(1);
    expect(sessions()).toMatchObject([{ status: "failed", last_signal: null }]);
  }, 30_000);

  it("an unknown --driver, openai without its endpoint, a bad presets file, a missing --script: exit 2, one line naming the flag", () => {
    const { repo, pulse, sessions, script } = setup();
    const badConfig = join(repo, ".git", "agents.yaml");
    writeFileSync(badConfig, "presets: [unclosed\n");
    const cases: [string[], Record<string, string>, RegExp][] = [
      [["--driver", "nosuch"], {}, /^pulse session: --driver: unknown driver "nosuch": the drivers are claude, .*openai, scripted\n$/],
      [["--driver", "openai"], {}, /^pulse session: --driver: the openai driver needs an endpoint: baseUrl and model \(or OPENAI_BASE_URL and OPENAI_MODEL\)\n$/],
      [["--driver", "codex"], { PULSE_AGENTS_CONFIG: badConfig }, /^pulse session: PULSE_AGENTS_CONFIG: .*agents\.yaml.*\n$/],
      [["--driver", "scripted", "--script", join(repo, "nope.json")], {}, /^pulse session: --script: .*nope\.json.*\n$/],
    ];
    for (const [args, env, message] of cases) {
      const r = pulse(["start", "--goal", "x", ...args], env);
      expect(r.code, `${args.join(" ")}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
    }
    expect(sessions()).toEqual([]);
    // Near misses: openai with its endpoint (unreachable: its one turn times out, and the session is recorded failed), the scripted driver with a script that exists.
    const openai = pulse(["start", "--goal", "x", "--driver", "openai", "--max-iterations", "1", "--turn-timeout", "1s"], { OPENAI_BASE_URL: "http://127.0.0.1:9/v1", OPENAI_MODEL: "m" });
    expect(openai.code, openai.stderr).toBe(1);
    const scripted = pulse(["start", "--goal", "x", "--driver", "scripted", "--script", script]);
    expect(scripted.code, scripted.stderr).toBe(0);
    expect(sessions().map((s) => s.status).sort()).toEqual(["complete", "failed"]);
  }, 30_000);

  it("takes --no-color on every session command, and NO_COLOR", () => {
    const { pulse, script } = setup();
    expect(pulse(["start", "--goal", "x", "--driver", "scripted", "--script", script, "--no-color"]).code).toBe(0);
    const id = (JSON.parse(pulse(["list", "--json", "--no-color"]).stdout) as { id: string }[])[0]!.id;
    for (const args of [["status", id], ["logs", id], ["list"], ["clean", "--dry-run"]]) {
      const r = pulse([...args, "--no-color"]);
      expect(r.code, `${args[0]}: ${r.stderr}`).toBe(0);
      expect(r.stdout).not.toMatch(/\x1b\[/);
      expect(pulse(args, { NO_COLOR: "1" }).code).toBe(0);
    }
    expect(pulse(["resume", id, "--no-color"]).stderr).toMatch(/is complete: there is nothing to resume/);
  }, 30_000);
});
