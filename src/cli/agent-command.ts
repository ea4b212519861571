/**
 * `pulse agent run|plan|decide|action|report|feedback|config`: the plan → decide → act agent
 * (coding.plan_decide_act, seed 002) from the terminal. `run` prints one line per step; in
 * interactive mode it asks on the terminal before each action (declining blocks the step) and
 * for feedback after it.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { createInterface } from "node:readline/promises";
import type { Command } from "commander";
import { DriverSpecError } from "../../adapters/agents/create-driver.js";
import { ScriptError } from "../../adapters/agents/scripted/script.js";
import { SqliteAgentFeedback } from "../../adapters/sqlite/agent-feedback.js";
import { AgentError, createAgent, reportSummary, type Agent, type AgentOptions, type AskOptions, type RunHandle } from "../coding/agent/api.js";
import { ConfigError, defaultHome, homePaths, initConfig, loadConfig, parseConfig } from "../coding/agent/config.js";
import { FeedbackError, validateFeedback } from "../coding/agent/feedback.js";
import { ReportError } from "../coding/agent/report.js";
import { CorpusError } from "../coding/agent/retrieval/corpus.js";
import { ScreeningError } from "../coding/agent/retrieval/screen.js";
import type { ActionResult, Envelope, Feedback, Plan } from "../coding/agent/types.js";
import { EXIT, UsageError } from "./exit-codes.js";
import { StoreError } from "../store/contracts.js";
import type { CliIO } from "./io.js";
import { setExitCode } from "./main.js";

export const AGENT_HELP = `
The agent plans with your guides and knowledge, decides one action at a time, runs it as a
sandboxed subprocess and learns from the result, until its planner says the request is done
(manifests/coding/plan-decide-act.yaml). Its home (--home, default $PULSE_AGENT_HOME or
~/.pulse/agent) holds config.json, actions/, guides/, knowledge/, logs/ and agent.db (feedback,
action processes, and the runs and their steps: pulse runs --store <home>/agent.db lists them; run
with --store .pulse/pulse.db or postgres://… to record them beside sessions and workflows).

  pulse agent config --init                      # a config.json with every default, and the folders
  pulse agent run --request "Welcome Ada" --auto
  pulse agent action --name greet --args '{"who": "Ada"}'
  pulse agent report --run-id ID

Exit codes of run: 0 succeeded, 1 failed, timed out or aborted, 2 usage error, 4 blocked.`;

export const AGENT_EXIT_BLOCKED = 4;

interface CommonOpts {
  home?: string;
  driver?: string;
  script?: string;
  store?: string;
  workdir?: string;
}

const addCommon = (c: Command) =>
  c
    .option("--home <dir>", "the agent's home (default $PULSE_AGENT_HOME, else ~/.pulse/agent)")
    .option("--driver <name>", "config (the home's llm entries, default), scripted, openai, or a CLI agent preset")
    .option("--script <file>", "the scripted driver's answers (JSON or YAML)")
    .option("--store <path>", "run, process and feedback records: a SQLite file (default <home>/agent.db; .pulse/pulse.db puts runs beside sessions and workflows for pulse runs), postgres://… (runs and processes; feedback stays in <home>/agent.db) or memory:")
    .option("--workdir <dir>", "where actions run and --files resolve (default the current directory)");

function optionsOf(o: CommonOpts, io: CliIO): AgentOptions {
  if (o.driver === "scripted" && !o.script) throw new UsageError("--script: the scripted driver needs a script (--script FILE)");
  if (o.script && o.driver !== "scripted") throw new UsageError("--script: only the scripted driver takes a script (add --driver scripted)");
  return { home: o.home ?? defaultHome(io.env), env: io.env, workdir: o.workdir ?? io.cwd, ...(o.driver ? { driver: o.driver } : {}), ...(o.script ? { script: o.script } : {}), ...(o.store ? { store: o.store } : {}), onNote: (m) => io.stderr(`pulse agent: ${m}\n`) };
}

/** Input mistakes (config, corpus, script, flags) are one line and exit 2; anything else is the caller's. */
async function guarded(cmd: Command, fn: () => Promise<number>): Promise<void> {
  try {
    setExitCode(cmd, await fn());
  } catch (e) {
    if (e instanceof StoreError) throw new UsageError(`--store: ${e.message}`);
    if (e instanceof ConfigError || e instanceof CorpusError || e instanceof AgentError || e instanceof ScriptError || e instanceof DriverSpecError || e instanceof FeedbackError || e instanceof ReportError || e instanceof ScreeningError) throw new UsageError(e.message);
    throw e;
  }
}

function json(value: string, flag: string): unknown {
  try {
    return JSON.parse(value);
  } catch (e) {
    throw new UsageError(`${flag}: not JSON: ${(e as Error).message}`);
  }
}

/** The terminal prompts of an interactive run (stdin a terminal); without one there is nobody to ask. */
function terminalHooks(): Partial<AskOptions> {
  if (!process.stdin.isTTY) return {};
  const ask = async (q: string) => {
    const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
    try {
      return (await rl.question(q)).trim();
    } finally {
      rl.close();
    }
  };
  return {
    confirm: async (a, args, why) => /^y(es)?$/i.test(await ask(`run ${a.name} ${JSON.stringify(args)} (${why})? [y/N] `)),
    askUser: async (q) => (await ask(`${q}\n> `)) || null,
    feedbackHandler: async (r: ActionResult): Promise<Feedback | null> => {
      const a = await ask(`how did ${r.name} do? score 0-5, Enter to skip: `);
      if (!/^[0-5]$/.test(a)) return null;
      const score = Number(a);
      return { actionRunId: r.actionRunId, score, signal: score >= 4 ? "success" : score >= 2 ? "partial" : "fail", submittedBy: "user", ts: new Date().toISOString() };
    },
  };
}

/** One line per step, from its progress_evaluated (and the action result before it). */
export function progressPrinter(write: (s: string) => void): (e: Envelope) => void {
  let last: Record<string, unknown> | undefined;
  let decision: Record<string, unknown> | undefined;
  return (e) => {
    if (e.type === "decision") decision = e.payload.decision as Record<string, unknown>;
    if (e.type === "action_result") last = e.payload;
    if (e.type === "plan_built") {
      const plan = e.payload.plan as Plan;
      const online = e.payload.online as { results: number; cached: boolean; error?: string; endpoint: string } | undefined;
      if (online) write(online.error ? `online knowledge: none (${online.error})\n` : `online knowledge: ${online.results} result(s) from ${online.endpoint}${online.cached ? " (cached)" : ""}\n`);
      write(`plan: ${plan.steps.map((s) => `${s.id} ${s.desc}`).join(" → ")}\n`);
    }
    if (e.type !== "progress_evaluated") return;
    const p = e.payload as { status: string; reason: string; step: string | null; progress: { done: number; total: number } };
    const what = last ? `${last.name} → ${last.status}${last.ended !== "exited" ? ` (${last.ended})` : ""}: ${String(last.status === "ok" ? last.result : last.error).split("\n")[0]!.slice(0, 100)}` : `${String(decision?.type ?? "?")}: ${String(decision?.reason ?? "").slice(0, 100)}`;
    const next = p.status === "continue" ? "continuing" : p.status === "terminate" ? `stopping (${p.reason})` : `blocked (${p.reason})`;
    write(`${p.step ? `step ${p.step} ` : ""}${what} · ${p.progress.done}/${p.progress.total} done · ${next}\n`);
    last = undefined;
  };
}

/** Waits for a run (Ctrl-C or SIGTERM abort it), prints its outcome, and maps it to the exit code. */
async function followRun(a: Agent, handle: RunHandle, io: CliIO, asJson: boolean): Promise<number> {
  const stop = () => a.abort(handle.runId);
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  const out = await handle.finished.finally(() => {
    process.off("SIGINT", stop);
    process.off("SIGTERM", stop);
  });
  if (asJson) io.stdout(`${JSON.stringify({ runId: out.runId, status: out.status, reason: out.reason, ...(out.message ? { message: out.message } : {}), report: out.report, summary: out.summary }, null, 2)}\n`);
  else io.stdout(`run ${out.runId} ${out.status} (${out.reason})${out.message ? `: ${out.message}` : ""} · ${out.summary.actions.length} action(s) · report ${out.report}\n`);
  return out.status === "succeeded" ? EXIT.ok : out.status === "blocked" ? AGENT_EXIT_BLOCKED : EXIT.problems;
}

async function withAgent<T>(o: CommonOpts, io: CliIO, fn: (agent: Agent) => Promise<T>): Promise<T> {
  const agent = await createAgent(optionsOf(o, io));
  try {
    return await fn(agent);
  } finally {
    await agent.close();
  }
}

export function addAgentCommands(agent: Command, io: CliIO): void {
  agent.description("The plan → decide → act agent: guides, knowledge and actions in its home (pulse agent --help).").addHelpText("after", AGENT_HELP);

  addCommon(agent.command("run").description("Answer a request: plan, decide, act until done."))
    .requiredOption("--request <text>", "what to do")
    .option("--auto", "auto mode: confirm only actions with a require_for_tags tag")
    .option("--files <files...>", "files given with the request (the actions' agent handle may read them)")
    .option("--online", "also search online knowledge (only when config.json has knowledge.online true and a knowledge.baseUrl)")
    .option("--json", "print the run's outcome as JSON")
    .action(async (o: CommonOpts & { request: string; auto?: boolean; files?: string[]; online?: boolean; json?: boolean }, cmd: Command) =>
      guarded(cmd, () =>
        withAgent(o, io, async (a) => {
          const print = progressPrinter((s) => io.stdout(s));
          const hooks = o.auto ? {} : terminalHooks();
          const handle = await a.ask(o.request, o.files ?? [], { executionMode: o.auto ? "auto" : "interactive", ...(o.online ? { online: true } : {}), ...hooks, onEvent: o.json ? undefined : print } as AskOptions);
          io.stderr(`pulse agent: run ${handle.runId} started (if this pulse dies: pulse agent resume ${handle.runId})\n`);
          return followRun(a, handle, io, !!o.json);
        }),
      ),
    );

  addCommon(agent.command("resume").description("Continue a run whose pulse died (listed interrupted by pulse agent runs) from its last recorded step."))
    .argument("<run-id>", "the run's id")
    .option("--json", "print the run's outcome as JSON")
    .addHelpText("after", "\nWithout --driver, the run goes on with the driver (and --script) it was started with; --driver chooses another.")
    .action(async (runId: string, o: CommonOpts & { json?: boolean }, cmd: Command) =>
      guarded(cmd, () =>
        withAgent(o, io, async (a) => {
          const print = progressPrinter((s) => io.stdout(s));
          const handle = await a.resume(runId, { ...terminalHooks(), ...(o.json ? {} : { onEvent: print }) });
          return followRun(a, handle, io, !!o.json);
        }),
      ),
    );

  addCommon(agent.command("runs").description("The home's runs, newest first: a run whose pulse died shows interrupted until it is resumed."))
    .option("--limit <n>", "how many", "20")
    .option("--json", "print them as JSON")
    .action(async (o: CommonOpts & { limit: string; json?: boolean }, cmd: Command) =>
      guarded(cmd, async () => {
        if (!/^[1-9]\d*$/.test(o.limit)) throw new UsageError(`--limit: must be a positive whole number, got ${JSON.stringify(o.limit)}`);
        return withAgent(o, io, async (a) => {
          const runs = await a.runs(Number(o.limit));
          if (o.json) io.stdout(`${JSON.stringify(runs, null, 2)}\n`);
          else for (const r of runs) io.stdout(`${r.runId}  ${r.status.padEnd(11)}  ${r.startedAt}  ${r.actionsUsed} action(s)${r.plan ? ` · ${r.plan.done}/${r.plan.total} done` : ""}${r.reason ? ` · ${r.reason}` : ""}  ${JSON.stringify(r.request.slice(0, 60))}\n`);
          return EXIT.ok;
        });
      }),
    );

  addCommon(agent.command("plan").description("Build a plan for a request (no action runs)."))
    .requiredOption("--request <text>", "what to plan")
    .option("--files <files...>", "files given with the request")
    .option("--online", "also search online knowledge (only when config.json has knowledge.online true)")
    .option("--out <file>", "write the plan there instead of standard output")
    .action(async (o: CommonOpts & { request: string; files?: string[]; online?: boolean; out?: string }, cmd: Command) =>
      guarded(cmd, () =>
        withAgent(o, io, async (a) => {
          const text = `${JSON.stringify(await a.plan(o.request, o.files ?? [], { online: !!o.online }), null, 2)}\n`;
          if (o.out) writeFileSync(o.out, text);
          else io.stdout(text);
          return EXIT.ok;
        }),
      ),
    );

  addCommon(agent.command("decide").description("Decide the next step of a plan (a file pulse agent plan wrote)."))
    .requiredOption("--plan <file>", "the plan (JSON)")
    .action(async (o: CommonOpts & { plan: string }, cmd: Command) =>
      guarded(cmd, async () => {
        let text: string;
        try {
          text = readFileSync(o.plan, "utf8");
        } catch (e) {
          throw new UsageError(`--plan: cannot read ${o.plan}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
        }
        const plan = json(text, "--plan") as Plan;
        if (!plan || typeof plan.task !== "string" || !Array.isArray(plan.steps)) throw new UsageError(`--plan: ${o.plan} is not a plan ({ task, steps: [...] })`);
        return withAgent(o, io, async (a) => {
          io.stdout(`${JSON.stringify(await a.decide(plan), null, 2)}\n`);
          return EXIT.ok;
        });
      }),
    );

  addCommon(agent.command("action").description("Run one action now, its arguments checked against its meta.json."))
    .requiredOption("--name <action>", "the action's name")
    .option("--args <json>", "its arguments, a JSON object", "{}")
    .action(async (o: CommonOpts & { name: string; args: string }, cmd: Command) =>
      guarded(cmd, async () => {
        const args = json(o.args, "--args");
        return withAgent(o, io, async (a) => {
          const r = await a.action(o.name, args);
          io.stdout(`${JSON.stringify(r, null, 2)}\n`);
          return r.status === "ok" ? EXIT.ok : EXIT.problems;
        });
      }),
    );

  agent
    .command("report")
    .description("A run's report (logs/<run id>.jsonl) as one summary JSON.")
    .requiredOption("--run-id <id>", "the run's id")
    .option("--home <dir>", "the agent's home")
    .option("--out <file>", "write the summary there instead of standard output")
    .action(async (o: { runId: string; home?: string; out?: string }, cmd: Command) =>
      guarded(cmd, async () => {
        const text = `${JSON.stringify(reportSummary(o.home ?? defaultHome(io.env), o.runId), null, 2)}\n`;
        if (o.out) writeFileSync(o.out, text);
        else io.stdout(text);
        return EXIT.ok;
      }),
    );

  agent
    .command("feedback")
    .description("Feedback on an action run (replaces the system's implicit feedback; once per run otherwise).")
    .requiredOption("--action-run-id <id>", "the action run's id (from the report)")
    .requiredOption("--score <n>", "0 to 5")
    .option("--signal <s>", "success, partial or fail (default from the score)")
    .option("--comment <text>", "a comment")
    .option("--home <dir>", "the agent's home")
    .option("--store <path>", "a SQLite file (default <home>/agent.db)")
    .action(async (o: { actionRunId: string; score: string; signal?: string; comment?: string; home?: string; store?: string }, cmd: Command) =>
      guarded(cmd, async () => {
        const score = Number(o.score);
        if (!/^\d+(\.\d+)?$/.test(o.score) || score > 5) throw new UsageError(`--score: must be a number from 0 to 5, got ${JSON.stringify(o.score)}`);
        const signal = o.signal ?? (score >= 4 ? "success" : score >= 2 ? "partial" : "fail");
        const home = o.home ?? defaultHome(io.env);
        const f = validateFeedback({ actionRunId: o.actionRunId, score, signal, submittedBy: "user", ts: new Date().toISOString(), ...(o.comment ? { comment: o.comment } : {}) });
        const store = SqliteAgentFeedback.open(o.store ?? homePaths(home).store);
        try {
          const known = await store.get(f.actionRunId);
          if (!known) throw new UsageError(`--action-run-id: no action run ${f.actionRunId} has feedback in ${store.path}: runs record theirs as they end`);
          const r = await store.add(f, known);
          io.stdout(`${r === "replaced" ? "recorded (it replaces the system's implicit feedback)" : "unchanged: this run has feedback from a person already"}\n`);
          return EXIT.ok;
        } finally {
          await store.close();
        }
      }),
    );

  agent
    .command("config")
    .description("Write a config.json with every default (--init) or print the one in use (--show).")
    .option("--init", "write <home>/config.json (or --save FILE) and the home's folders")
    .option("--save <file>", "with --init: where to write it")
    .option("--show", "print the configuration in use, defaults filled in")
    .option("--load <file>", "with --show: read this file instead of <home>/config.json")
    .option("--home <dir>", "the agent's home")
    .action(async (o: { init?: boolean; save?: string; show?: boolean; load?: string; home?: string }, cmd: Command) =>
      guarded(cmd, async () => {
        if (!o.init === !o.show) throw new UsageError("config: give exactly one of --init and --show");
        if (o.save && !o.init) throw new UsageError("--save: only with --init");
        if (o.load && !o.show) throw new UsageError("--load: only with --show");
        const home = o.home ?? defaultHome(io.env);
        if (o.init) {
          io.stdout(`wrote ${initConfig(home, o.save)}\n`);
          return EXIT.ok;
        }
        let config;
        if (o.load) {
          let text: string;
          try {
            text = readFileSync(o.load, "utf8");
          } catch (e) {
            throw new UsageError(`--load: cannot read ${o.load}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
          }
          config = parseConfig(json(text, "--load"), o.load);
        } else config = loadConfig(home);
        io.stdout(`${JSON.stringify(config, null, 2)}\n`);
        return EXIT.ok;
      }),
    );
}
