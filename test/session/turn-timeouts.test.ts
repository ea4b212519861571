/**
 * Whose turn limit applies: the session's (--turn-timeout) over the profile's, the profile's over
 * the driver preset's (timeoutMs in an agents config), and the preset's over the built-in 15
 * minutes, which the shipped profile no longer overrides. Driven through `pulse session start`
 * with a preset running the fake agent in its silent mode (it never answers).
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runBin } from "../cli/run-bin.js";
import { FAKE_AGENT } from "../agents/support/fake-agent.js";
import { gitRepo, removeDir } from "./helpers.js";

const repos: string[] = [];
afterAll(() => repos.forEach(removeDir));

function setup(presetTimeoutMs: number, profileTimeoutMs?: number): { repo: string; env: Record<string, string>; profile?: string } {
  const repo = gitRepo();
  repos.push(repo);
  const config = join(repo, ".git", "agents.yaml");
  writeFileSync(config, `presets:\n  slow:\n    extends: claude\n    command: ${FAKE_AGENT}\n    timeoutMs: ${presetTimeoutMs}\n    env: { FAKE_AGENT_MODE: silent }\n`);
  let profile: string | undefined;
  if (profileTimeoutMs !== undefined) {
    profile = join(repo, ".git", "profile.json");
    writeFileSync(profile, JSON.stringify({ loop: "coding.pulse_session", phases: { dispatch_agent: { driver: "slow", timeoutMs: profileTimeoutMs } } }));
  }
  return { repo, env: { PULSE_AGENTS_CONFIG: config }, ...(profile ? { profile } : {}) };
}

async function turn(args: string[], s: ReturnType<typeof setup>): Promise<{ ms: number; out: string }> {
  const t0 = Date.now();
  const r = runBin("pulse", ["session", "start", "--goal", "x", "--repo", s.repo, "--driver", "slow", "--max-iterations", "1", "--json", "--store", join(s.repo, ".git", "pulse.db"), ...(s.profile ? ["--profile", s.profile] : []), ...args], { cwd: s.repo, env: s.env });
  return { ms: Date.now() - t0, out: r.stdout + r.stderr };
}

describe("a turn's limit", () => {
  it("is the preset's timeoutMs when neither the profile nor the session sets one", async () => {
    const r = await turn([], setup(1_500));
    expect(r.out).toMatch(/"status":"timeout"/);
    expect(r.out).toMatch(/wall-clock limit/);
    expect(r.ms).toBeLessThan(20_000);
  }, 40_000);

  it("is the profile's over the preset's, and the session's --turn-timeout over both", async () => {
    const profiled = await turn([], setup(600_000, 1_500));
    expect(profiled.out).toMatch(/"status":"timeout"/);
    expect(profiled.ms).toBeLessThan(20_000);
    const flagged = await turn(["--turn-timeout", "1s"], setup(600_000, 600_000));
    expect(flagged.out).toMatch(/"status":"timeout"/);
    expect(flagged.ms).toBeLessThan(20_000);
  }, 60_000);

  it("refuses a limit that is no duration, and takes the near miss", async () => {
    const s = setup(1_500);
    const bad = await turn(["--turn-timeout", "soon"], s);
    expect(bad.out).toMatch(/must be a duration from 1s to 24h/);
    expect(bad.out).not.toMatch(/at .*\.js:\d+/);
  }, 40_000);
});
