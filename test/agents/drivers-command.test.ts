import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDriver } from "../../adapters/agents/create-driver.js";
import { BUILTIN_PRESET_NAMES } from "../../adapters/agents/cli/presets.js";
import { runBin } from "../cli/run-bin.js";
import { agentClisBin } from "./support/agent-clis.js";
import { FAKE_AGENT, tempDir } from "./support/fake-agent.js";

let dir: ReturnType<typeof tempDir>;
let bin: string;
beforeAll(() => {
  dir = tempDir("pulse-drivers-");
  bin = join(dir.path, "bin");
  mkdirSync(bin);
  // A "codex" whose help lost --skip-git-repo-check: drift.
  writeFileSync(join(bin, "codex"), `#!/bin/sh\nif [ "$1" = "--version" ]; then echo "codex-cli 9.9.9"; exit 0; fi\necho "Usage: codex exec [OPTIONS]\\n      --json  print JSON\\n  -s, --sandbox <MODE>\\n  -C, --cd <DIR>\\n  -c, --config <k=v>\\n  -m, --model <MODEL>"\n`);
  chmodSync(join(bin, "codex"), 0o755);
});
afterAll(() => dir.cleanup());

describe("pulse drivers", () => {
  it("advertises only flags that exist: each --flag it prints is one of pulse session start or pulse drivers", () => {
    const out = runBin("pulse", ["drivers"], { env: { PATH: "/nonexistent" } }).stdout;
    const flags = [...new Set(out.match(/--[a-z][a-z-]*/g) ?? [])];
    expect(flags.length).toBeGreaterThan(0);
    const known = runBin("pulse", ["session", "start", "--help"]).stdout + runBin("pulse", ["drivers", "--help"]).stdout;
    for (const f of flags) expect(known, `pulse drivers prints ${f}`).toMatch(new RegExp(`${f}\\b`));
    expect(out).toMatch(/OPENAI_BASE_URL and OPENAI_MODEL/);
  });

  it("lists every preset with installed, version and flag drift as a warning (exit 0)", () => {
    const r = runBin("pulse", ["drivers"], { env: { PATH: `${bin}:/usr/bin:/bin` } });
    expect(r.code).toBe(0);
    for (const name of [...BUILTIN_PRESET_NAMES, "openai", "scripted"]) expect(r.stdout).toMatch(new RegExp(`^${name}\\s`, "m"));
    expect(r.stdout).toMatch(/^codex\s+codex\s+yes\s+codex-cli 9\.9\.9\s+DRIFT \(1\)$/m);
    expect(r.stdout).toMatch(/^claude\s+claude\s+no\s+-\s+-$/m);
    expect(r.stderr).toMatch(/warning: codex: `codex exec --help` no longer shows --skip-git-repo-check/);
    expect(r.stderr).toMatch(/not installed: claude, gemini, qwen, opencode, goose, aider/);
  });

  it("--json, and user presets from --config", () => {
    const config = join(dir.path, "agents.yaml");
    writeFileSync(config, `presets:\n  fake:\n    command: ${FAKE_AGENT}\n    format: claude\n    args: ["-p"]\n    prompt: { via: arg, arg: ["{prompt}"] }\n  claude-local:\n    extends: claude\n    endpoint: { baseUrl: "http://127.0.0.1:4000/v1", model: qwen3 }\n`);
    const r = runBin("pulse", ["drivers", "--json", "--config", config], { env: { PATH: `${bin}:/usr/bin:/bin` } });
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout) as { presets: { preset: string; path?: string; source: string; endpoint?: string; missingFlags: string[] }[] };
    expect(report.presets.find((p) => p.preset === "fake")).toMatchObject({ path: FAKE_AGENT, source: config });
    expect(report.presets.find((p) => p.preset === "claude-local")).toMatchObject({ endpoint: "http://127.0.0.1:4000/v1", source: config });
    expect(report.presets.find((p) => p.preset === "codex")?.missingFlags).toEqual(["--skip-git-repo-check"]);
  });

  it("a bad config file is a usage error with file, line, column and field", () => {
    const config = join(dir.path, "bad.yaml");
    writeFileSync(config, "presets:\n  mine:\n    command: x\n    format: claud\n    args: []\n    prompt: { via: arg, arg: ['{prompt}'] }\n");
    const r = runBin("pulse", ["drivers", "--config", config]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`pulse: ${config}:4:13: presets.mine.format: must be one of claude, codex, gemini, opencode, text\n`);
    writeFileSync(config, "presets:\n  mine:\n    extends: nope\n");
    expect(runBin("pulse", ["drivers", "--config", config]).stderr).toMatch(/:3:14: presets\.mine\.extends: must name a preset defined before/);
    writeFileSync(config, "presets:\n  mine: {command: x, format: text, args: [], prompt: {via: file}}\n");
    expect(runBin("pulse", ["drivers", "--config", config]).stderr).toMatch(/via file needs the file list/);
    expect(runBin("pulse", ["drivers", "--config", join(dir.path, "missing.yaml")]).stderr).toMatch(/missing\.yaml: cannot read: ENOENT/);
  });

  it.skipIf(!agentClisBin() && process.env.CI !== "true")("the real CLIs (test/agent-clis) show no drift against the presets", () => {
    const clis = agentClisBin();
    expect(clis, "run `node test/agent-clis/install.mjs`").toBeDefined();
    const r = runBin("pulse", ["drivers", "--json"], { env: { PATH: `${clis}:${process.env.PATH}`, HOME: process.env.HOME ?? "/root" } });
    const report = JSON.parse(r.stdout) as { presets: { preset: string; path?: string; helpRead: boolean; missingFlags: string[]; version?: string }[] };
    for (const name of ["claude", "codex", "gemini", "qwen", "opencode"]) {
      const p = report.presets.find((x) => x.preset === name)!;
      expect(p.path, name).toBeDefined();
      expect(p.helpRead, name).toBe(true);
      expect(p.missingFlags, name).toEqual([]);
      expect(p.version, name).toMatch(/\d+\.\d+\.\d+/);
    }
  }, 120_000);
});

describe("createDriver", () => {
  it("builds a user preset from a config file and runs it", async () => {
    const config = join(dir.path, "run.yaml");
    writeFileSync(config, `presets:\n  fake:\n    extends: claude\n    command: ${FAKE_AGENT}\n`);
    const d = createDriver({ name: "fake", configPath: config, env: { PATH: process.env.PATH }, cli: { env: { FAKE_AGENT_SESSION: "via-config" } } });
    const r = await d.run({ prompt: "x", cwd: dir.path });
    expect(r).toMatchObject({ status: "ok", sessionId: "via-config" });
  });

  it("names the drivers there are when one is unknown; openai needs an endpoint; scripted a script", () => {
    expect(() => createDriver({ name: "clade", env: {} })).toThrow(/unknown driver "clade": the drivers are claude, codex, gemini, qwen, opencode, goose, aider, openai, scripted/);
    expect(() => createDriver({ name: "openai", env: {} })).toThrow(/needs an endpoint/);
    expect(createDriver({ name: "openai", env: { OPENAI_BASE_URL: "http://127.0.0.1:11434/v1", OPENAI_MODEL: "qwen3" } }).name).toBe("openai");
    expect(() => createDriver({ name: "scripted", env: {} })).toThrow(/needs a script/);
    expect(createDriver({ name: "scripted", script: { steps: [{ text: "hi" }] } }).name).toBe("scripted");
  });
});
