/**
 * The agent as a library (seed 002's `Agent`: `ask`, `getReport`, `submitFeedback`), assembled
 * from its home: config.json, actions/, guides/, knowledge/, logs/, the embeddings cache and the
 * store (feedback and the action processes, SQLite `agent.db`). The LLM is the home's configured
 * provider (openai_compatible or ollama), or any agent driver (`scripted` in tests and the demo).
 */
import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import { createDriver } from "../../../adapters/agents/create-driver.js";
import { ChatLlm, apiKeyOf, baseUrlOf } from "../../../adapters/agents/llm/chat-llm.js";
import { DriverLlm } from "../../../adapters/agents/llm/driver-llm.js";
import { HttpEmbedder } from "../../../adapters/agents/llm/embeddings-client.js";
import { runActionProcess } from "../../../adapters/agents/actions/run-action.js";
import { HttpOnlineSearch } from "../../../adapters/agents/knowledge/http-search.js";
import { MemoryAgentFeedback } from "../../../adapters/memory/agent-feedback.js";
import { MemoryAgentProcesses } from "../../../adapters/memory/agent-processes.js";
import { SqliteAgentFeedback } from "../../../adapters/sqlite/agent-feedback.js";
import { SqliteAgentProcesses } from "../../../adapters/sqlite/agent-processes.js";
import { SqliteAgentRuns } from "../../../adapters/sqlite/agent-runs.js";
import { MemoryAgentRuns } from "../../../adapters/memory/agent-runs.js";
import { SqliteAgentJournal } from "../../../adapters/sqlite/agent-journal.js";
import { MemoryAgentJournal } from "../../../adapters/memory/agent-journal.js";
import type { AgentRunRecords } from "./run-records.js";
import { pidAlive, procStart } from "../liveness.js";
import { reapDeadRunners } from "../../../adapters/agents/cli/reaper.js";
import type { Script } from "../../../adapters/agents/scripted/script.js";
import { createRuntime } from "../../embedded.js";
import type { Runtime } from "../../runtime/runtime.js";
import type { AgentProcesses } from "../agent-processes.js";
import { packageFile } from "../session/profile.js";
import { performAction, newActionRunId, type ActionExecutor } from "./actions/executor.js";
import { discoverActions } from "./actions/discover.js";
import { ConfigError, defaultHome, homePaths, loadConfig, type AgentConfig } from "./config.js";
import { decide } from "./decider.js";
import { validateFeedback, type FeedbackStore, type FeedbackStored } from "./feedback.js";
import type { Llm } from "./llm.js";
import { buildPlan } from "./planner.js";
import { readReport, ReportError } from "./report.js";
import { loadGuides, loadKnowledge } from "./retrieval/corpus.js";
import { EmbeddingCache } from "./retrieval/embedding-cache.js";
import { OnlineKnowledge, onlineRefusal, type OnlineSearch } from "./retrieval/online.js";
import { screen } from "./retrieval/screen.js";
import { AGENT_LOOP_ID } from "./handlers.js";
import { AGENT_MANIFEST, AgentRunner, type NewRun, type RunOutcome } from "./runner.js";
import { resumeRefusal, statusOf, type AgentRunRecord, type AgentRunStatus, type RunJournal } from "./run-journal.js";
import type { AgentHooks, ExecutionMode } from "./run-state.js";
import { summarize, type RunSummary } from "./summary.js";
import type { ActionResult, Decision, KnowledgeEntry, Plan } from "./types.js";

export interface AgentOptions {
  /** The agent's home (default $PULSE_AGENT_HOME, else ~/.pulse/agent). */
  home?: string;
  /** Where actions run and relative --files resolve (default the process's cwd). */
  workdir?: string;
  env?: Readonly<Record<string, string | undefined>>;
  /** `config` (the home's llm entries, default), `scripted` (with `script`), or an agent driver name (`openai`, a CLI preset). */
  driver?: string;
  script?: string | Script;
  /** An LLM of one's own for the planner and the decider (overrides `driver`). */
  llm?: Llm;
  executor?: ActionExecutor;
  /**
   * Where feedback, action process records and run records go: `memory:`, a SQLite file (default
   * `<home>/agent.db`; the shared `.pulse/pulse.db` puts the runs beside sessions and workflows), or
   * a PostgreSQL store (runs and processes there; feedback and the resume journal in `<home>/agent.db`).
   */
  store?: string;
  config?: AgentConfig;
  /** A reranker of one's own (else the llm entry screening.rerankerAlias names, if any). */
  reranker?: Llm;
  /** How a `wait` decision waits (tests pass a recorder). */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** A runtime of one's own to host the loop in (its substrates, its audit); else an embedded one. */
  runtime?: Runtime;
  /** An online search of one's own (else the HTTP endpoint knowledge.baseUrl names); used only on opt-in. */
  onlineSearch?: OnlineSearch;
  /** Hears what the agent did on its own: action processes a killed run left, stopped at start. */
  onNote?: (message: string) => void;
  /** Only these of the home's actions are offered (a studio thread's chosen actions); default all. */
  actions?: readonly string[];
}

export interface AskOptions extends AgentHooks {
  executionMode?: ExecutionMode;
  /** Online knowledge for this run (`--online`): refused unless config.json has knowledge.online true. */
  online?: boolean;
  runId?: string;
}

export interface RunHandle {
  runId: string;
  /** Settles when the run ends, however it ends. */
  finished: Promise<RunOutcome>;
}

export class AgentError extends Error {}

/** A run as listed: its record, with `interrupted` for a running one whose pulse is gone. */
export type AgentRunListing = Omit<AgentRunRecord, "status" | "state" | "pending"> & { status: AgentRunStatus; plan: { done: number; total: number } | null };

/** Whether the process that recorded a run is still that process (a reused pid is not). */
export function runnerAlive(pid: number, start?: number): boolean {
  if (pid === process.pid) return true;
  if (!pidAlive(pid)) return false;
  return start === undefined || procStart(pid) === start;
}

function listing(r: AgentRunRecord): AgentRunListing {
  const { state, pending: _p, ...rest } = r;
  const steps = state.plan?.steps;
  return { ...rest, status: statusOf(r, runnerAlive), plan: steps ? { done: steps.filter((s) => s.status === "done").length, total: steps.length } : null };
}

export interface Agent {
  readonly home: string;
  readonly config: AgentConfig;
  ask(text: string, files?: string[], opts?: AskOptions): Promise<RunHandle>;
  /** Continues a run whose pulse died (status `interrupted`) from its last recorded step. */
  resume(runId: string, hooks?: AgentHooks): Promise<RunHandle>;
  /** The home's runs, newest first (a run whose pulse died shows `interrupted`). */
  runs(limit?: number): Promise<AgentRunListing[]>;
  getReport(runId: string): Promise<RunSummary>;
  submitFeedback(actionRunId: string, feedback: unknown): Promise<FeedbackStored>;
  plan(request: string, files?: string[], opts?: { online?: boolean }): Promise<Plan>;
  /** Seed 002's searchOnline: refused unless config.json has knowledge.online true. */
  searchOnline(query: string, k?: number): Promise<KnowledgeEntry[]>;
  decide(plan: Plan): Promise<Decision>;
  action(name: string, args: unknown): Promise<ActionResult>;
  abort(runId: string): boolean;
  close(): Promise<void>;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A run's report file in a home (no LLM, no store needed to read it). */
export function reportPath(home: string, runId: string, config: AgentConfig = loadConfig(home)): string {
  if (!UUID.test(runId)) throw new AgentError(`--run-id: ${JSON.stringify(runId)} is not a run id (a UUID)`);
  return join(homePaths(home, config).logs, `${runId}.jsonl`);
}

export function reportSummary(home: string, runId: string): RunSummary {
  return summarize(readReport(reportPath(home, runId)));
}

function llmsOf(o: AgentOptions, config: AgentConfig, home: string, env: Readonly<Record<string, string | undefined>>): { planner: Llm; decider: Llm } {
  if (o.llm) return { planner: o.llm, decider: o.llm };
  const driver = o.driver ?? "config";
  if (driver !== "config") {
    const d = createDriver({ name: driver, env, ...(o.script ? { script: o.script } : {}) });
    const llm = new DriverLlm(d, join(homePaths(home, config).runs, "llm"), AGENT_LOOP_ID);
    return { planner: llm, decider: llm };
  }
  if (config.llm.length === 0) throw new ConfigError(`${homePaths(home).config}: no llm entry: add one (pulse agent config --init writes a sample), or use --driver scripted --script FILE`);
  const byAlias = (alias: string | undefined) => new ChatLlm(config.llm.find((e) => e.alias === alias) ?? config.llm[0]!, env);
  return { planner: byAlias(config.roles.planner), decider: byAlias(config.roles.decider) };
}

function embeddingsOf(config: AgentConfig, home: string, env: Readonly<Record<string, string | undefined>>): EmbeddingCache | undefined {
  const s = config.screening;
  if (s.strategy === "keyword") return undefined;
  const entry = config.llm.find((e) => e.alias === s.embeddingAlias) ?? (s.embeddingAlias ? undefined : config.llm.find((e) => e.embeddingModel));
  if (!entry?.embeddingModel) throw new ConfigError(`screening.strategy "${s.strategy}" needs embeddings: set screening.embeddingAlias to an llm entry with an embeddingModel (no silent fall back to keywords)`);
  const apiKey = apiKeyOf(entry, env);
  return new EmbeddingCache(homePaths(home, config).cache, new HttpEmbedder(entry.embeddingModel, { baseUrl: baseUrlOf(entry), requestTimeoutMs: entry.requestTimeoutMs ?? 60_000, maxRetries: entry.maxRetries ?? 3, ...(apiKey ? { apiKey } : {}) }));
}

export async function createAgent(o: AgentOptions = {}): Promise<Agent> {
  const env = o.env ?? process.env;
  const home = resolve(o.home ?? defaultHome(env));
  const config = o.config ?? loadConfig(home);
  const paths = homePaths(home, config);
  const workdir = resolve(o.workdir ?? process.cwd());
  // Made when first needed: `pulse agent action` and `report` need no model.
  let llms: { planner: Llm; decider: Llm } | undefined;
  const models = () => (llms ??= llmsOf(o, config, home, env));
  /** The models a run is started with, as its record keeps them (none when the caller gave its own LLM). */
  const chosen: AgentRunRecord["driver"] = o.llm ? undefined : { name: o.driver ?? "config", ...(typeof o.script === "string" ? { script: resolve(o.script) } : {}) };
  const embeddings = embeddingsOf(config, home, env);
  const rerankEntry = config.screening.rerankerAlias ? config.llm.find((e) => e.alias === config.screening.rerankerAlias) : undefined;
  const reranker = o.reranker ?? (rerankEntry ? new ChatLlm(rerankEntry, env) : undefined);
  const executor = o.executor ?? runActionProcess;
  const online = config.knowledge.online ? new OnlineKnowledge(o.onlineSearch ?? new HttpOnlineSearch(config.knowledge, env), config.knowledge, paths.cache) : undefined;
  /** The online knowledge a run may use: none unless asked for, refused when asked for and off. */
  const onlineFor = (asked: boolean | undefined): OnlineKnowledge | undefined => {
    if (!asked) return undefined;
    const refused = onlineRefusal(config.knowledge, true, paths.config);
    if (refused || !online) throw new AgentError(refused ?? "--online: online knowledge is off");
    return online;
  };
  let feedback: FeedbackStore;
  let processes: AgentProcesses;
  let journal: RunJournal;
  let runRecords: AgentRunRecords;
  if (o.store === "memory:") {
    feedback = new MemoryAgentFeedback();
    processes = new MemoryAgentProcesses();
    journal = new MemoryAgentJournal();
    runRecords = new MemoryAgentRuns();
  } else {
    if (o.store !== undefined && /^postgres(ql)?:\/\//.test(o.store)) {
      // The runs and their action processes in the store the other loops use; the feedback (what
      // the agent learns) and the resume journal stay in the home's agent.db.
      const { PostgresRuns } = await import("../../../adapters/postgres/run-records.js");
      const pg = await PostgresRuns.open(o.store, o.onNote ? { onNote: o.onNote } : {});
      feedback = SqliteAgentFeedback.open(paths.store);
      journal = SqliteAgentJournal.open(paths.store);
      processes = pg.agentProcesses();
      runRecords = pg.agentRuns();
    } else {
      const path = resolve(o.store?.replace(/^sqlite:/, "") ?? paths.store);
      feedback = SqliteAgentFeedback.open(path);
      processes = SqliteAgentProcesses.open(path);
      journal = SqliteAgentJournal.open(path);
      runRecords = SqliteAgentRuns.open(path);
    }
    // An agent run killed mid-action left its process (and its record): stopped before anything runs.
    for (const run of await reapDeadRunners(processes)) o.onNote?.(`stopped the action processes run ${run} left when its pulse died`);
  }
  const runner = await AgentRunner.create(o.runtime ?? (await createRuntime()), packageFile(AGENT_MANIFEST), paths.logs, config.logging.keep_last_runs, journal, { pid: process.pid, ...(procStart(process.pid) !== undefined ? { start: procStart(process.pid)! } : {}) });
  const filesOf = (files: readonly string[]) =>
    files.map((f) => {
      const abs = isAbsolute(f) ? f : resolve(workdir, f);
      if (!existsSync(abs)) throw new AgentError(`--files: ${f}: no such file`);
      return abs;
    });
  const actions = () => discoverActions(paths.actions).actions.filter((a) => !o.actions || o.actions.includes(a.name));
  const reportOf = (runId: string) => reportPath(home, runId, config);
  /** What a run is given, new or resumed: the models, the home's guides, knowledge and actions, the stores. */
  const runInput = (runId: string, asked: { request: string; files: string[]; mode: NewRun["mode"]; workdir: string }, runOnline: OnlineKnowledge | undefined, hooks: NewRun["hooks"], own = models): NewRun => {
    const { planner, decider } = own();
    return {
      runId,
      ...(chosen ? { driver: chosen } : {}),
      ...asked,
      config,
      runsDir: join(paths.runs, runId),
      planner,
      decider,
      ...(embeddings ? { embeddings } : {}),
      ...(reranker ? { reranker } : {}),
      guides: loadGuides([paths.guides]),
      knowledge: loadKnowledge([paths.knowledge]),
      ...(runOnline ? { online: runOnline } : {}),
      actions: actions(),
      executor,
      feedback,
      processes,
      records: runRecords,
      hooks: { onRecordError: (e) => o.onNote?.(`the run's outcome could not be recorded: ${e.message}`), ...hooks },
      parentEnv: env,
      ...(o.sleep ? { sleep: o.sleep } : {}),
    };
  };

  return {
    home,
    config,
    async ask(text, files = [], opts = {}) {
      if (!text.trim()) throw new AgentError("--request: the request is empty");
      const runOnline = onlineFor(opts.online);
      const runId = opts.runId ?? randomUUID();
      const finished = runner.run(runInput(runId, { request: text, files: filesOf(files), mode: opts.executionMode ?? config.execution.execution_mode, workdir }, runOnline, opts));
      return { runId, finished };
    },
    async resume(runId, hooks = {}) {
      /** The models the run was started with, unless this agent was given its own (`--driver`, an LLM). */
      const resumedModels = (record: AgentRunRecord) => {
        const was = record.driver;
        if (!was || o.llm) return models;
        const asked = o.driver ?? "config";
        if (o.driver !== undefined) {
          if (asked !== was.name || (o.script !== undefined && typeof o.script === "string" && resolve(o.script) !== was.script)) o.onNote?.(`run ${runId} started with --driver ${was.name}${was.script ? ` --script ${was.script}` : ""}; it goes on with --driver ${asked}, as asked`);
          return models;
        }
        if (was.name === "config") return models;
        o.onNote?.(`run ${runId} goes on with the driver it started with: --driver ${was.name}${was.script ? ` --script ${was.script}` : ""}`);
        return () => llmsOf({ ...o, driver: was.name, ...(was.script ? { script: was.script } : {}) }, config, home, env);
      };
      if (!UUID.test(runId)) throw new AgentError(`resume: ${JSON.stringify(runId)} is not a run id (a UUID)`);
      const record = await journal.get(runId);
      const refused = resumeRefusal(runId, record, runnerAlive, process.pid);
      if (refused || !record) throw new AgentError(`resume: ${refused}`);
      // Online knowledge again only if the run had opted in and config.json still allows it.
      const asked = { request: record.request, files: record.files, mode: record.mode, workdir: record.workdir };
      const finished = runner.run(runInput(runId, asked, record.online ? online : undefined, hooks, resumedModels(record)), record);
      return { runId, finished };
    },
    async runs(limit) {
      return (await journal.list(limit)).map(listing);
    },
    async getReport(runId) {
      return summarize(readReport(reportOf(runId)));
    },
    async submitFeedback(actionRunId, value) {
      const f = validateFeedback({ ...(value as object), actionRunId });
      const known = await feedback.get(actionRunId);
      return feedback.add(f, known ? { action: known.action, runId: known.runId } : { action: "?", runId: "?" });
    },
    async plan(request, files = [], opts = {}) {
      const fromOnline = onlineFor(opts.online);
      const guides = await screen(loadGuides([paths.guides]), request, { ...config.screening, ...(embeddings ? { embeddings } : {}) });
      const extra = fromOnline ? (await fromOnline.docsFor(request)).docs : [];
      const knowledge = await screen([...loadKnowledge([paths.knowledge]), ...extra], request, { ...config.screening, ...(embeddings ? { embeddings } : {}) });
      return (await buildPlan(models().planner, { request, files: filesOf(files), guides: guides.map((g) => g.entry), knowledge: knowledge.map((k) => k.entry), actions: actions().map((a) => ({ name: a.name, description: a.description })), iteration: 1 })).plan;
    },
    async searchOnline(query, k) {
      const refused = onlineRefusal(config.knowledge, true, paths.config);
      if (refused || !online) throw new AgentError(refused ?? "online knowledge is off");
      return (await online.searchOnline(query, k ?? config.knowledge.maxResults)).entries;
    },
    async decide(plan) {
      const candidates = actions().map((a, i) => ({ name: a.name, description: a.description, tags: a.tags, arguments: a.arguments, screen: 1 / (i + 1), feedback: 0, score: 1 / (i + 1) }));
      return (await decide(models().decider, { plan, candidates, observations: [], iteration: 1 })).decision;
    },
    async action(name, args) {
      const spec = actions().find((a) => a.name === name);
      if (!spec) throw new AgentError(`--name: no action ${JSON.stringify(name)} in ${paths.actions} (there are ${actions().map((a) => a.name).join(", ") || "none"})`);
      const runId = randomUUID();
      return performAction(executor, spec, args, { runId, actionRunId: newActionRunId(), workdir, files: [], runsDir: join(paths.runs, runId), parentEnv: env });
    },
    abort: (runId) => runner.abort(runId),
    async close() {
      await feedback.close();
      await processes.close();
      await journal.close();
      // Last: on PostgreSQL it closes the pool the process records share.
      await runRecords.close();
    },
  };
}

export { ReportError };
