/**
 * The tools the HTTP driver offers the model (OpenAI function-calling schemas) and their
 * dispatch. The runtime owns them: the model only asks. Every path is confined to the workspace;
 * the shell runs with the CLI driver's process hygiene and a timeout.
 */
import { buildEnv } from "../cli/env.js";
import { runProcess } from "../cli/run-process.js";
import type { RunOptions } from "../../../src/agents/contract.js";
import { FileTools, ToolError } from "./file-tools.js";
import { Workspace, WorkspaceError } from "./workspace.js";

export interface ToolDefinition {
  type: "function";
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

const str = (description: string) => ({ type: "string", description });
const obj = (properties: Record<string, unknown>, required: string[]) => ({ type: "object", properties, required, additionalProperties: false });
const editProps = { old_string: str("exact text to replace, whitespace included"), new_string: str("replacement text"), replace_all: { type: "boolean", description: "replace every occurrence" } };

export const TOOL_DEFINITIONS: ToolDefinition[] = [
  { type: "function", function: { name: "read_file", description: "Read a text file (lines numbered). Read a file before editing it.", parameters: obj({ path: str("path relative to the workspace"), offset: { type: "integer", description: "first line (1-based)" }, limit: { type: "integer", description: "number of lines" } }, ["path"]) } },
  { type: "function", function: { name: "list_directory", description: "List a directory (folders end with /).", parameters: obj({ path: str("directory, default the workspace root") }, []) } },
  { type: "function", function: { name: "glob", description: "Find files by glob pattern, e.g. src/**/*.ts.", parameters: obj({ pattern: str("glob pattern"), path: str("folder to search, default the root") }, ["pattern"]) } },
  { type: "function", function: { name: "grep", description: "Search file contents with a regular expression; answers path:line: text.", parameters: obj({ pattern: str("JavaScript regular expression"), path: str("file or folder, default the root"), glob: str("only files matching this glob") }, ["pattern"]) } },
  { type: "function", function: { name: "write_file", description: "Create or overwrite a file with the given content.", parameters: obj({ path: str("path relative to the workspace"), content: str("the whole new content") }, ["path", "content"]) } },
  { type: "function", function: { name: "edit_file", description: "Replace exact text in a file read before. Fails if the text is not found or occurs more than once (unless replace_all).", parameters: obj({ path: str("path relative to the workspace"), ...editProps }, ["path", "old_string", "new_string"]) } },
  { type: "function", function: { name: "multi_edit", description: "Several exact replacements in one file, applied in order, all or none.", parameters: obj({ path: str("path relative to the workspace"), edits: { type: "array", items: obj(editProps, ["old_string", "new_string"]) } }, ["path", "edits"]) } },
  { type: "function", function: { name: "shell", description: "Run a shell command in the workspace (bash -c), with a timeout. Answers the exit code and output.", parameters: obj({ command: str("the command"), timeout_ms: { type: "integer", description: "default 120000" } }, ["command"]) } },
];

export interface ToolOutcome {
  ok: boolean;
  output: string;
}

export interface ToolRunnerOptions {
  shellTimeoutMs?: number;
  /** Environment for shell commands, built like an agent's (allowlist). */
  parentEnv?: Readonly<Record<string, string | undefined>>;
  passEnv?: string[];
  signal?: AbortSignal;
  /** Each shell command's process as it starts (see RunOptions.onSpawn). */
  onSpawn?: RunOptions["onSpawn"];
  /** The call's run marker (RunOptions.marker). */
  marker?: string;
}

const MAX_TOOL_OUTPUT = 32 << 10;

export class ToolRunner {
  private readonly ws: Workspace;
  private readonly files: FileTools;

  constructor(
    root: string,
    private readonly options: ToolRunnerOptions = {},
  ) {
    this.ws = new Workspace(root);
    this.files = new FileTools(this.ws);
  }

  async run(name: string, args: Record<string, unknown>): Promise<ToolOutcome> {
    try {
      const a = args as never;
      let output: string;
      switch (name) {
        case "read_file":
          output = this.files.read(a);
          break;
        case "list_directory":
          output = this.files.list(a);
          break;
        case "glob":
          output = this.files.glob(a);
          break;
        case "grep":
          output = this.files.grep(a);
          break;
        case "write_file":
          output = this.files.write(a);
          break;
        case "edit_file":
          output = this.files.edit(a);
          break;
        case "multi_edit":
          output = this.files.multiEdit(a);
          break;
        case "shell":
          return await this.shell(args);
        default:
          return { ok: false, output: `unknown tool ${name}; the tools are ${TOOL_DEFINITIONS.map((t) => t.function.name).join(", ")}` };
      }
      return { ok: true, output: cap(output) };
    } catch (e) {
      if (e instanceof ToolError || e instanceof WorkspaceError) return { ok: false, output: `error: ${e.message}` };
      const err = e as NodeJS.ErrnoException;
      return { ok: false, output: `error: ${err.code ? `${err.code}: ` : ""}${err.message}` };
    }
  }

  private async shell(args: Record<string, unknown>): Promise<ToolOutcome> {
    if (typeof args.command !== "string" || !args.command.trim()) return { ok: false, output: "error: command must be a non-empty string" };
    const timeoutMs = typeof args.timeout_ms === "number" && args.timeout_ms > 0 ? Math.min(args.timeout_ms, 30 * 60_000) : (this.options.shellTimeoutMs ?? 120_000);
    const env = buildEnv({ parent: this.options.parentEnv ?? process.env, passThrough: this.options.passEnv ?? [], set: {}, cwd: this.ws.root });
    const r = await runProcess({ command: "bash", args: ["-c", args.command], cwd: this.ws.root, env, timeoutMs, killGraceMs: 2000, maxOutputBytes: MAX_TOOL_OUTPUT }, { ...(this.options.signal ? { signal: this.options.signal } : {}), ...(this.options.onSpawn ? { onSpawn: this.options.onSpawn } : {}), ...(this.options.marker ? { marker: this.options.marker } : {}) });
    if (r.reason === "timeout") return { ok: false, output: `error: the command did not finish within ${timeoutMs} ms and was stopped\n${r.stdout}${r.stderr}` };
    if (r.reason === "spawn_error") return { ok: false, output: `error: ${r.error}` };
    const body = `${r.stdout}${r.stderr ? `${r.stdout && !r.stdout.endsWith("\n") ? "\n" : ""}[stderr]\n${r.stderr}` : ""}`;
    return { ok: r.code === 0, output: cap(`exit code ${r.code ?? r.signal}\n${body}`) };
  }
}

function cap(s: string): string {
  return s.length > MAX_TOOL_OUTPUT ? `${s.slice(0, MAX_TOOL_OUTPUT / 2)}\n[… ${s.length - MAX_TOOL_OUTPUT} characters omitted …]\n${s.slice(-MAX_TOOL_OUTPUT / 2)}` : s;
}
