import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CliDriver } from "../../adapters/agents/cli/cli-driver.js";
import { HeadTailBuffer } from "../../adapters/agents/cli/output-cap.js";
import { fill, presetFlags } from "../../adapters/agents/cli/preset.js";
import { BUILTIN_PRESETS } from "../../adapters/agents/cli/presets.js";
import { Workspace } from "../../adapters/agents/http/workspace.js";
import { FAKE_AGENT, tempDir } from "./support/fake-agent.js";

/** Runs a preset with the fake agent as its command (text format: the output is the answer) and returns its argv and env. */
async function invocation(name: string, options: ConstructorParameters<typeof CliDriver>[1] = {}, prompt = "the prompt") {
  const ws = tempDir("pulse-preset-");
  try {
    const preset = { ...BUILTIN_PRESETS[name]!, format: "text" as const };
    const d = new CliDriver(preset, { command: FAKE_AGENT, parentEnv: { PATH: process.env.PATH, HOME: "/home/u" }, ...options, env: { FAKE_AGENT_TEXT: "{argv}\n{env}", ...options.env } });
    const r = await d.run({ prompt, cwd: ws.path });
    d.close();
    // Read as text, the fake's stream is its lines; its result line holds "{argv}\n{env}" filled in.
    const result = JSON.parse(r.text.split("\n").find((l) => l.startsWith('{"type":"result"'))!) as { result: string };
    const [argv, env] = result.result.split("\n");
    return { args: JSON.parse(argv!) as string[], env: JSON.parse(env!) as Record<string, string>, r };
  } finally {
    ws.cleanup();
  }
}

describe("presets compose the documented invocations", () => {
  it("goose: prompt by file, GOOSE_MODE=auto, endpoint through OPENAI_HOST", async () => {
    const { args, env } = await invocation("goose", { endpoint: { baseUrl: "http://127.0.0.1:11434/v1", model: "qwen3" } });
    expect(args.slice(0, 4)).toEqual(["run", "--no-session", "--quiet", "-i"]);
    expect(args[4]).toMatch(/prompt\.md$/);
    expect(env).toMatchObject({ GOOSE_MODE: "auto", GOOSE_PROVIDER: "openai", OPENAI_HOST: "http://127.0.0.1:11434", OPENAI_BASE_PATH: "v1/chat/completions", GOOSE_MODEL: "qwen3" });
  });

  it("aider: message file, no auto-commits, endpoint and model as openai/<model>", async () => {
    const { args } = await invocation("aider", { endpoint: { baseUrl: "http://127.0.0.1:8000", model: "coder" } });
    expect(args).toEqual(expect.arrayContaining(["--yes-always", "--no-auto-commits", "--openai-api-base", "http://127.0.0.1:8000/v1", "--model", "openai/coder", "--message-file"]));
    expect(args.filter((a) => a === "--model")).toHaveLength(1);
  });

  it("gemini and qwen take the prompt after -p; codex after its flags, in the workspace", async () => {
    expect((await invocation("gemini")).args.slice(-2)).toEqual(["-p", "the prompt"]);
    expect((await invocation("qwen", { endpoint: { baseUrl: "http://127.0.0.1:9", model: "m" } })).args).toEqual(["--yolo", "--output-format", "stream-json", "-m", "m", "--auth-type", "openai", "-p", "the prompt"]);
    const codex = await invocation("codex", { endpoint: { baseUrl: "http://127.0.0.1:9", model: "m" } });
    expect(codex.args.slice(0, 6)).toEqual(["exec", "--json", "--skip-git-repo-check", "-s", "workspace-write", "-C"]);
    expect(codex.env.CODEX_HOME).toMatch(/\/codex$/);
    expect(codex.env.PULSE_ENDPOINT_API_KEY).toBe("pulse-no-key");
  });

  it("an optional part naming no value drops out whole; flags for drift exclude hidden ones", () => {
    expect(fill("--model={model}", {})).toBeUndefined();
    expect(fill("{env:KEY} {model}", { model: "m" })).toBe("{env:KEY} m");
    expect(presetFlags(BUILTIN_PRESETS.claude!)).not.toContain("--max-turns");
    expect(presetFlags(BUILTIN_PRESETS.claude!)).toContain("--output-format");
  });
});

describe("properties", () => {
  it("the workspace never resolves a path outside it", () => {
    const ws = tempDir("pulse-prop-ws-");
    try {
      const w = new Workspace(ws.path);
      const segment = fc.constantFrom("..", ".", "a", "b", "..a", "/", "");
      fc.assert(
        fc.property(fc.array(segment, { maxLength: 8 }), fc.boolean(), (parts, absolute) => {
          const path = (absolute ? "/" : "") + parts.join("/");
          try {
            const resolved = w.resolve(path);
            expect(resolved === w.root || resolved.startsWith(w.root + "/")).toBe(true);
          } catch (e) {
            expect((e as Error).name).toBe("WorkspaceError");
          }
        }),
      );
    } finally {
      ws.cleanup();
    }
  });

  it("the output cap keeps the exact head and tail and counts what it dropped", () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ maxLength: 50 }), { maxLength: 30 }), fc.integer({ min: 2, max: 64 }), (chunks, max) => {
        const b = new HeadTailBuffer(max);
        for (const c of chunks) b.push(Buffer.from(c));
        const all = Buffer.concat(chunks.map((c) => Buffer.from(c)));
        expect(b.total).toBe(all.length);
        if (all.length <= max) expect(b.truncated).toBe(0);
        else expect(b.truncated).toBe(all.length - max);
      }),
    );
  });
});
