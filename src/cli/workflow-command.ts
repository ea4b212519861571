/**
 * `pulse workflow start|status|logs|stop|resume|steer|clean|mcp`: the pulsing workflow
 * (coding.pulsing_workflow) from the terminal. A workflow runs in the foreground; any other
 * pulse process steers it through the shared records.
 */
import { existsSync, readFileSync } from "node:fs";
import { randomUUID } from "node:crypto";
import { basename, resolve } from "node:path";
import type { Command } from "commander";
import { ProfileError } from "../coding/session/profile.js";
import { SessionRepoError } from "../coding/session/repo.js";
import { worktreesDir } from "../coding/session/workspace.js";
import { isFinished, type WorkflowRecord } from "../coding/workflow/records.js";
import { startWorkflow } from "../coding/workflow/service.js";
import { WorkflowError } from "../coding/workflow/runner.js";
import { closeWorktree, WorkflowInputError } from "../coding/workflow/workspace.js";
import { isToolCall, pulseDoneTool, PREFLIGHT_DONE_TOOL, RECORD_BASELINE_TOOL, REQUEST_EXTENSION_TOOL } from "../coding/completion-tools.js";
import { StoreError } from "../store/contracts.js";
import { EXIT, UsageError } from "./exit-codes.js";
import type { CliIO } from "./io.js";
import { setExitCode } from "./main.js";
import { availablePresets } from "../../adapters/agents/create-driver.js";
import { findOnPath } from "../../adapters/agents/cli/probe.js";
import { missingCli, STORE_HELP } from "./session-setup.js";
import { driverFor, openWorkflows, type Workflows } from "./workflow-setup.js";
import { eventLine, shownStatus, summaryMarkdown, summaryOf, summaryText } from "./workflow-view.js";

export const WORKFLOW_HELP = `
A workflow runs an approved plan's pulses one at a time (manifests/coding/pulsing-workflow.yaml,
settings in profiles/coding/pulsing-workflow.profile.json): a preflight prepares the worktree and
records baselines, then each pulse's agent works until its pulse_done passes the verification
gate, and the pulse becomes one commit on the workflow branch.

  pulse workflow start --plan plan.md --repo . --base main --verify "npm test"
  pulse workflow status ID          # the review summary (--json, --markdown)
  pulse workflow logs ID --follow
  pulse workflow stop ID            # now: the agent is stopped, its work kept in a recovery commit
  pulse workflow resume ID          # a halted, stopped or interrupted workflow
  pulse workflow steer ID "text"    # new guidance: the next pulse turn replans and acknowledges first
  pulse workflow clean              # removes the worktrees of workflows that are not running

The workflow works in a git worktree of its own ($PULSE_WORKTREES, else
$XDG_STATE_HOME/pulse/worktrees) on branch pulse/workflow/<short id> (or --branch) off --base;
each pulse on <workflow branch>-pulse-<n>, fast-forwarded into it and deleted. Your checkout is
never touched.

Exit codes of start and resume: 0 completed or stopped, 1 failed or abandoned, 2 usage error,
4 halted for a person (a failed pulse, unresolved issues).`;

export const WORKFLOW_EXIT = { completed: 0, stopped: 0, failed: 1, abandoned: 1, halted: 4 } as const;

interface StoreOpts {
  store?: string;
  profile?: string;
}

interface StartOpts extends StoreOpts {
  plan: string;
  repo: string;
  base?: string;
  branch?: string;
  driver?: string;
  script?: string;
  model?: string;
  verify: string[];
  merge?: string;
  json?: boolean;
}

const collect = (v: string, prev: string[]) => [...prev, v];

function withStore(cmd: Command): Command {
  return cmd.option("--store <path>", STORE_HELP).option("--profile <file>", "a loop profile instead of profiles/coding/pulsing-workflow.profile.json");
}

async function guarded(cmd: Command, io: CliIO, body: () => Promise<number>): Promise<void> {
  try {
    setExitCode(cmd, await body());
  } catch (e) {
    if (e instanceof WorkflowInputError) {
      io.stderr(`pulse workflow: --${e.field}: ${e.reason}\n`);
      return setExitCode(cmd, EXIT.usage);
    }
    const usage = e instanceof UsageError || e instanceof ProfileError || e instanceof SessionRepoError || ["DriverSpecError", "ScriptError"].includes((e as Error)?.name);
    const known = usage || e instanceof WorkflowError || e instanceof StoreError || (e as Error)?.name === "WorkflowRecordsError" || (e as Error)?.name === "WorktreeError" || (e as Error)?.name === "GitError";
    if (!known) throw e;
    io.stderr(`pulse workflow: ${(e as Error).message}\n`);
    setExitCode(cmd, usage ? EXIT.usage : EXIT.problems);
  }
}

async function withWorkflows<T>(opts: StoreOpts, io: CliIO, fn: (wf: Workflows) => Promise<T>): Promise<T> {
  const wf = await openWorkflows(opts, io);
  try {
    return await fn(wf);
  } finally {
    await wf.close();
  }
}

async function found(wf: Workflows, id: string): Promise<WorkflowRecord> {
  const w = await wf.records.get(id);
  if (!w) throw new UsageError(`no workflow ${id} in ${wf.storePath.replace(/\/\/[^@/]*@/, "//")} (an id or a unique prefix of at least 4 characters)`);
  return w;
}

/** Runs a workflow in the foreground: events as lines, SIGINT/SIGTERM stop it (its work kept), the summary at the end. */
async function runForeground(wf: Workflows, id: string, io: CliIO, json: boolean): Promise<number> {
  const runner = await wf.runner();
  const stop = (signal: string) => () => runner.stopHere(id, `stopped by ${signal}`);
  const onInt = stop("SIGINT");
  const onTerm = stop("SIGTERM");
  process.on("SIGINT", onInt);
  process.on("SIGTERM", onTerm);
  try {
    const w = await runner.run(id, { onEvent: (e) => {
      const line = eventLine(e);
      if (line && !json) io.stderr(`${line}\n`);
    } });
    await printSummary(wf, w, io, json ? "json" : "text");
    return WORKFLOW_EXIT[w.status as keyof typeof WORKFLOW_EXIT] ?? EXIT.problems;
  } finally {
    process.off("SIGINT", onInt);
    process.off("SIGTERM", onTerm);
  }
}

async function printSummary(wf: Workflows, w: WorkflowRecord, io: CliIO, format: "text" | "json" | "markdown"): Promise<void> {
  const s = summaryOf(w, await wf.records.pulses(w.id), await wf.records.preflight(w.id), await wf.records.baselines(w.id), existsSync(w.worktree_path));
  io.stdout(format === "json" ? `${JSON.stringify(s, null, 2)}\n` : format === "markdown" ? summaryMarkdown(s) : summaryText(s));
}

export function addWorkflowCommands(workflow: Command, io: CliIO): void {
  workflow.description("The pulsing workflow: an approved plan's pulses, each one verified checkpoint commit (seed 001).").addHelpText("after", WORKFLOW_HELP);

  withStore(workflow.command("start"))
    .description("Start a workflow from a plan and run it in the foreground (events on standard error, the review summary on standard output).")
    .requiredOption("--plan <file>", "the approved plan: Markdown (one pulse per top-level list item) or JSON ({\"pulses\": [{\"title\", \"description\"}]})")
    .option("--repo <path>", "the git repository (never touched: the workflow works in a worktree of its own)", ".")
    .option("--base <ref>", "the branch or commit the workflow branch starts from, as the local ref stands (default the repository's current branch)")
    .option("--branch <name>", "the workflow branch (default pulse/workflow/<short id>)")
    .option("--driver <name>", "claude, codex, gemini, qwen, opencode, openai, scripted, … (default from the profile)")
    .option("--script <file>", "the scripted driver's steps (JSON or YAML)")
    .option("--model <name>", "the model the driver asks for")
    .option("--merge <mode>", "when every pulse succeeded, merge the workflow branch into --base: ff, squash or rebase (never into a branch checked out anywhere: that checkout is yours)")
    .option("--verify <cmd>", "a command every pulse is held to, against its preflight baseline (repeatable; the preflight may add more)", collect, [])
    .option("--json", "print the review summary as JSON")
    .action((opts: StartOpts, cmd: Command) =>
      guarded(cmd, io, async () => {
        const planPath = resolve(io.cwd, opts.plan);
        let text: string;
        try {
          text = readFileSync(planPath, "utf8");
        } catch (e) {
          throw new UsageError(`--plan ${opts.plan}: ${(e as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (e as Error).message}`);
        }
        return withWorkflows(opts, io, async (wf) => {
          const w = await startWorkflow(
            { plan: text, planName: opts.plan, planPath, repo: resolve(io.cwd, opts.repo), ...(opts.base ? { base: opts.base } : {}), ...(opts.branch ? { branch: opts.branch } : {}), ...(opts.driver ? { driver: opts.driver } : {}), ...(opts.script ? { script: resolve(io.cwd, opts.script) } : {}), ...(opts.model ? { model: opts.model } : {}), verify: opts.verify, ...(opts.merge !== undefined ? { merge: opts.merge } : {}) },
            { records: wf.records, profile: wf.profile, worktreesDir: worktreesDir(io.env), checkDriver: (driver) => missingCli(driver.name, io.env, availablePresets, findOnPath) ?? void driverFor({ driver }, "run_pulse", wf.storePath, io) },
          );
          const pulses = (await wf.records.pulses(w.id)).length;
          if (!opts.json) io.stderr(`workflow ${w.id}: ${pulses} pulse(s) on ${w.branch_name} from ${w.base_ref} (${w.base_sha.slice(0, 8)})\n${w.base_note ? `note: ${w.base_note}\n` : ""}`);
          return runForeground(wf, w.id, io, opts.json === true);
        });
      }),
    );

  withStore(workflow.command("status"))
    .description("A workflow's review summary (pulses, commits, unresolved issues, baselines, gate results, cost); without an id, every workflow.")
    .argument("[id]", "the workflow (an id or a unique prefix)")
    .option("--json", "as JSON")
    .option("--markdown", "as Markdown")
    .action((id: string | undefined, opts: StoreOpts & { json?: boolean; markdown?: boolean }, cmd: Command) =>
      guarded(cmd, io, () =>
        withWorkflows(opts, io, async (wf) => {
          if (id === undefined) {
            const all = await wf.records.list();
            if (opts.json) io.stdout(`${JSON.stringify(all.map((w) => ({ id: w.id, title: w.title, status: shownStatus(w), branch: w.branch_name, created_at: w.created_at })), null, 2)}\n`);
            else io.stdout(all.length === 0 ? "no workflows\n" : all.map((w) => `${w.id.slice(0, 8)}  ${shownStatus(w).padEnd(11)} ${w.branch_name}  ${w.title}\n`).join(""));
            return EXIT.ok;
          }
          await printSummary(wf, await found(wf, id), io, opts.json ? "json" : opts.markdown ? "markdown" : "text");
          return EXIT.ok;
        }),
      ),
    );

  withStore(workflow.command("logs"))
    .description("A workflow's events (preflight, pulses, turns and their verdicts, the agent's words and tool calls with --agent).")
    .argument("<id>", "the workflow")
    .option("--follow", "keep printing until the workflow stops running")
    .option("--agent", "also the agent's text and tool calls")
    .option("--json", "each event as one JSON line")
    .action((id: string, opts: StoreOpts & { follow?: boolean; agent?: boolean; json?: boolean }, cmd: Command) =>
      guarded(cmd, io, () =>
        withWorkflows(opts, io, async (wf) => {
          const w = await found(wf, id);
          let after = 0;
          for (;;) {
            for (const e of await wf.records.events(w.id, after)) {
              after = e.seq;
              const data = e.data as { type: string; workflow_id: string; event?: { type: string; text?: string; call?: { name: string } } };
              if (opts.json) io.stdout(`${JSON.stringify({ seq: e.seq, at: e.at, ...data })}\n`);
              else {
                const line = data.type === "agent" ? (opts.agent ? agentLine(data.event) : undefined) : eventLine(data);
                if (line) io.stdout(`${e.at.slice(11, 19)} ${line}\n`);
              }
            }
            const now = await wf.records.get(w.id);
            if (!opts.follow || !now || shownStatus(now) !== "running") return EXIT.ok;
            await new Promise((r) => setTimeout(r, 250));
          }
        }),
      ),
    );

  withStore(workflow.command("stop"))
    .description("Stop a running workflow now: the agent is stopped, the pulse's work kept in a recovery commit on its branch; resume continues it.")
    .argument("<id>", "the workflow")
    .action((id: string, opts: StoreOpts, cmd: Command) =>
      guarded(cmd, io, () =>
        withWorkflows(opts, io, async (wf) => {
          const w = await found(wf, id);
          if (shownStatus(w) !== "running") throw new WorkflowError("FINISHED", `workflow ${w.id} is ${shownStatus(w)}, not running`);
          await wf.records.update(w.id, { control: "stop" });
          io.stdout(`stop requested: workflow ${w.id} stops within a moment (pulse workflow status ${w.id.slice(0, 8)})\n`);
          return EXIT.ok;
        }),
      ),
    );

  withStore(workflow.command("steer"))
    .description("Change a workflow's direction: the text goes into the guidance of its worktree (.pulse/guidance.md); its next pulse turn is held to replan and acknowledge.")
    .argument("<id>", "the workflow")
    .argument("<text>", "the new guidance")
    .action((id: string, text: string, opts: StoreOpts, cmd: Command) =>
      guarded(cmd, io, () =>
        withWorkflows(opts, io, async (wf) => {
          const { steerWorkflow, workflowSteerText } = await import("../coding/workflow/steer.js");
          workflowSteerText(text);
          const w = await found(wf, id);
          const r = await steerWorkflow(wf.records, w.id, text, "cli");
          io.stdout(r.deferred ? `workflow ${w.id}: steer recorded; it has no worktree now (${shownStatus(w)}): the guidance is written to ${r.file} and replanned when it runs again\n` : `workflow ${w.id}: steered (event ${r.event!.id} in ${r.file}); ${shownStatus(w) === "running" ? "its next pulse turn replans first, until the agent acknowledges" : `it replans when it runs again (now ${shownStatus(w)})`}\n`);
          return EXIT.ok;
        }),
      ),
    );

  withStore(workflow.command("resume"))
    .description("Resume a halted, stopped, failed or interrupted workflow in the foreground: a failed or stopped pulse restarts on its kept branch, an interrupted one keeps what it left.")
    .argument("<id>", "the workflow")
    .option("--json", "print the review summary as JSON")
    .action((id: string, opts: StoreOpts & { json?: boolean }, cmd: Command) =>
      guarded(cmd, io, () => withWorkflows(opts, io, async (wf) => runForeground(wf, (await found(wf, id)).id, io, opts.json === true))),
    );

  withStore(workflow.command("clean"))
    .description("Remove the worktrees of workflows that are not running (uncommitted work kept in a recovery commit first); their branches stay.")
    .argument("[id]", "only this workflow")
    .option("--dry-run", "say what would be removed, remove nothing")
    .action((id: string | undefined, opts: StoreOpts & { dryRun?: boolean }, cmd: Command) =>
      guarded(cmd, io, () =>
        withWorkflows(opts, io, async (wf) => {
          const all = id === undefined ? await wf.records.list() : [await found(wf, id)];
          let n = 0;
          for (const w of all) {
            if (!existsSync(w.worktree_path)) continue;
            if (shownStatus(w) === "running") {
              io.stderr(`kept ${w.worktree_path}: workflow ${w.id.slice(0, 8)} is running\n`);
              continue;
            }
            n++;
            if (opts.dryRun) {
              io.stdout(`would remove ${w.worktree_path} (workflow ${w.id.slice(0, 8)}, ${w.status})\n`);
              continue;
            }
            const sha = await closeWorktree({ repo: w.repo_path, path: w.worktree_path }, w, false);
            io.stdout(`removed ${w.worktree_path} (workflow ${w.id.slice(0, 8)}, ${w.status})${sha ? `; uncommitted work kept in recovery commit ${sha.slice(0, 8)}` : ""}\n`);
            if (!isFinished(w.status) && w.status !== "abandoned") io.stdout(`  resume recreates it from branch ${w.branch_name}\n`);
          }
          if (n === 0) io.stdout("nothing to clean\n");
          return EXIT.ok;
        }),
      ),
    );

  withStore(workflow.command("mcp"))
    .description("Serve a workflow phase's completion tools over MCP on stdio: what a CLI agent of the workflow is handed.")
    .requiredOption("--phase <phase>", "preflight (record_baseline, preflight_done) or pulse (pulse_done with unresolvedIssues, request_extension)")
    .option("--guidance <dir>", "also serve pulse_should_interrupt and pulse_ack_replan for the guidance (.pulse/) of this working directory (the workflow's worktree)")
    .action(async (opts: StoreOpts & { phase: string; guidance?: string }, cmd: Command) =>
      guarded(cmd, io, async () => {
        if (opts.phase !== "preflight" && opts.phase !== "pulse") throw new UsageError(`--phase: ${JSON.stringify(opts.phase)} is not preflight or pulse`);
        if (opts.guidance !== undefined && !existsSync(opts.guidance)) throw new UsageError(`--guidance: ${opts.guidance}: no such directory`);
        const { serveCompletionTools } = await import("../serve/completion-mcp.js");
        return serveCompletionTools(opts.phase === "preflight" ? [RECORD_BASELINE_TOOL, PREFLIGHT_DONE_TOOL] : [pulseDoneTool(true), REQUEST_EXTENSION_TOOL], opts.guidance);
      }),
    );
}

function agentLine(e: { type: string; text?: string; call?: { name: string } } | undefined): string | undefined {
  if (!e) return undefined;
  if (e.type === "text" && e.text) return `  agent: ${e.text.split("\n")[0]}`;
  if (e.type === "tool_call" && e.call) return `  agent calls ${e.call.name}${isToolCall(e.call.name, "pulse_done") ? " (completion)" : ""}`;
  return undefined;
}
