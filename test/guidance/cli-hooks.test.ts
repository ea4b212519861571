/**
 * gemini's and qwen's hooks, installed for one run without touching the user's settings, driven
 * by a fake CLI that finds and runs them where that CLI does (gemini: a system-defaults file named
 * by GEMINI_CLI_SYSTEM_DEFAULTS_PATH, BeforeTool and AfterAgent; qwen: the settings.json of a
 * QWEN_HOME of the run's, PreToolUse and Stop). A change mid-turn blocks the next mutating call
 * until the agent replans and acknowledges; one made before it stops keeps it working; the user's
 * settings file is byte-for-byte as it was, its hooks still run beside pulse's, and qwen's other
 * files (credentials) and runtime folder (sessions) are the user's. codex is steered at the
 * boundary only, and says so.
 */
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { CliDriver } from "../../adapters/agents/cli/cli-driver.js";
import { BUILTIN_PRESETS } from "../../adapters/agents/cli/presets.js";
import { project } from "./helpers.js";
import { BIN } from "./serve-process.js";

const HOOKED = fileURLToPath(new URL("./fixtures/hooked-agent.mjs", import.meta.url));
const sha = (text: string) => createHash("sha256").update(text).digest("hex");
const PLAN = "# Plan\n\n1. Follow the new guidance.\n";
const hook = { command: process.execPath, args: [BIN, "guidance", "hook"] };

function driver(cli: "gemini" | "qwen" | "codex", env: Record<string, string>, home: string) {
  // The fake speaks claude's stream format; what is tested is where the hooks are and what they do.
  const preset = { ...BUILTIN_PRESETS[cli]!, format: "claude" as const };
  return new CliDriver(preset, { command: HOOKED, guidanceHook: hook, killGraceMs: 300, pipeGraceMs: 300, env: { FAKE_CLI: cli, FAKE_PULSE: `${process.execPath} ${BIN}`, ...env }, parentEnv: { PATH: process.env.PATH, HOME: home } });
}

/** A user's home with their own qwen settings (a hook of theirs, a model) and credentials. */
function userHome(): { home: string; settings: string; original: string } {
  const home = mkdtempSync(join(tmpdir(), "pulse-user-home-"));
  mkdirSync(join(home, ".qwen"));
  const original = JSON.stringify({ model: { name: "qwen3-coder" }, hooks: { PreToolUse: [{ matcher: "^write_file$", hooks: [{ type: "command", command: "true", name: "users-own" }] }] } }, null, 2);
  writeFileSync(join(home, ".qwen", "settings.json"), original);
  writeFileSync(join(home, ".qwen", "oauth_creds.json"), '{"token":"t"}');
  return { home, settings: join(home, ".qwen", "settings.json"), original };
}

describe.each(["gemini", "qwen"] as const)("%s's hooks, installed for one run", (cli) => {
  it("a change mid-turn blocks the next mutating call until the agent replans and acknowledges", async () => {
    const { root, file } = await project();
    const user = userHome();
    const report = join(user.home, "report.json");
    const r = await driver(cli, { FAKE_STEER: "start", FAKE_REPORT: report }, user.home).run({ prompt: "Write src/app.js", cwd: root });
    expect(r.status, JSON.stringify(r)).toBe("ok");
    const lines = r.text.split("\n");
    const [write, shell] = ["write_file", "run_shell_command"];
    expect(lines.slice(0, 4)).toEqual([`blocked ${write} src/app.js`, `did ${write} .pulse/plan.md`, expect.stringMatching(new RegExp(`^did ${shell} pulse guidance ack evt_\\S+$`)), `did ${write} src/app.js`]);
    const state = JSON.parse(readFileSync(file("state.json"), "utf8"));
    expect(state.last_acknowledged_event_id).toBe(/evt_\S+/.exec(lines[2]!)![0]);
    expect(state.last_acknowledged_plan_sha256).toBe(sha(PLAN));
    expect(r.warnings).toEqual([]);
    // The user's settings: untouched, and (qwen) still in force beside pulse's hooks, with the rest of the user's qwen home.
    expect(readFileSync(user.settings, "utf8")).toBe(user.original);
    const seen = JSON.parse(readFileSync(report, "utf8")) as { settingsFile: string; settings: { model?: unknown; hooks: Record<string, { hooks: { name?: string }[] }[]> }; env: Record<string, string | undefined>; qwenCreds: string | null };
    expect(seen.settingsFile.startsWith(user.home)).toBe(false);
    if (cli === "qwen") {
      expect(seen.settings.model).toEqual({ name: "qwen3-coder" });
      expect(seen.settings.hooks.PreToolUse!.map((d) => d.hooks[0]!.name)).toEqual(["users-own", "pulse-guidance-pre-tool-use"]);
      expect(seen.env.QWEN_RUNTIME_DIR).toBe(join(user.home, ".qwen"));
      expect(seen.qwenCreds).toBe('{"token":"t"}');
    } else {
      expect(Object.keys(seen.settings.hooks)).toEqual(["BeforeTool", "AfterAgent"]);
      expect(seen.env.GEMINI_CLI_SYSTEM_DEFAULTS_PATH).toBe(seen.settingsFile);
    }
  }, 60_000);

  it("a change just before the agent stops keeps it working on the replan, once; with no change nothing is blocked", async () => {
    const { root, file } = await project();
    const user = userHome();
    const r = await driver(cli, { FAKE_STEER: "end" }, user.home).run({ prompt: "Write src/app.js", cwd: root });
    expect(r.status).toBe("ok");
    expect(r.text.split("\n").slice(0, 4)).toEqual(["did write_file src/app.js", "stop blocked", "did write_file .pulse/plan.md", expect.stringMatching(/^did run_shell_command pulse guidance ack evt_/)]);
    expect(JSON.parse(readFileSync(file("state.json"), "utf8")).last_acknowledged_plan_sha256).toBe(sha(PLAN));
    const calm = await driver(cli, {}, user.home).run({ prompt: "Write src/app.js", cwd: (await project()).root });
    expect(calm.text.split("\n")[0]).toBe("did write_file src/app.js");
    expect(calm.text).not.toContain("blocked");
  }, 60_000);
});

describe("a CLI pulse installs no hooks in", () => {
  it("codex is steered at the boundary only, and says so once", async () => {
    const { root } = await project();
    const d = driver("codex", {}, mkdtempSync(join(tmpdir(), "pulse-user-home-")));
    const r1 = await d.run({ prompt: "x", cwd: root });
    const r2 = await d.run({ prompt: "x", cwd: root });
    expect(r1.warnings).toContain("codex has no hooks pulse installs: a guidance change reaches it at the next iteration, not during its turn");
    expect(r2.warnings.filter((w) => w.includes("hooks"))).toEqual([]);
  }, 60_000);
});
