/**
 * What one agent run shares across its iterations: its request, configuration, models, corpus,
 * actions and stores, its counters and deadline, and where its events go. An iteration's own
 * state (the plan, what happened so far) travels in the phases' outputs, never here.
 */
import type { AgentProcesses } from "../agent-processes.js";
import type { AgentRunRecords } from "./run-records.js";
import type { GuidanceGate, HeldReplan } from "../guidance/gate.js";
import type { ActionExecutor } from "./actions/executor.js";
import type { AgentConfig } from "./config.js";
import type { FeedbackStore } from "./feedback.js";
import type { Llm } from "./llm.js";
import type { Doc } from "./retrieval/corpus.js";
import type { EmbeddingCache } from "./retrieval/embedding-cache.js";
import type { OnlineKnowledge, OnlineOutcome } from "./retrieval/online.js";
import type { ActionResult, ActionSpec, Advisory, Envelope, EnvelopeType, Feedback, GuideEntry, KnowledgeEntry, Plan } from "./types.js";
import type { Candidate } from "./decider.js";

type Ranks = { keyword?: number; vector?: number; reranked?: number };

export type ExecutionMode = "interactive" | "auto";

export interface AgentHooks {
  /** Asked before an action that needs confirmation; no hook (or false) declines it. */
  confirm?: (action: ActionSpec, args: Record<string, unknown>, why: string) => Promise<boolean>;
  /** Asked when the decider asks the user; null: nobody answered. */
  askUser?: (question: string) => Promise<string | null>;
  /** Interactive feedback on an action's result; null (or no answer in time) records the neutral stub. */
  feedbackHandler?: (result: ActionResult) => Promise<Feedback | null>;
  /** Every event as it is emitted (the CLI's one-line progress). */
  onEvent?: (event: Envelope) => void;
  /** Hears a failure to record the run's outcome (the run itself has ended; its report has it all). */
  onRecordError?: (error: Error) => void;
}

export interface AgentRun {
  runId: string;
  request: string;
  files: string[];
  mode: ExecutionMode;
  workdir: string;
  config: AgentConfig;
  runsDir: string;
  planner: Llm;
  decider: Llm;
  embeddings?: EmbeddingCache;
  /** The model that reorders screened guides and knowledge (screening.rerankerAlias). */
  reranker?: Llm;
  guides: Doc<GuideEntry>[];
  knowledge: Doc<KnowledgeEntry>[];
  /** Online knowledge, present only when config.json and the run both opted in (`--online`). */
  online?: OnlineKnowledge;
  actions: ActionSpec[];
  executor: ActionExecutor;
  feedback: FeedbackStore;
  processes?: AgentProcesses;
  /** Where the run and its steps are recorded for other processes (`pulse runs`, the studio); none: the report only. */
  records?: AgentRunRecords;
  hooks: AgentHooks;
  parentEnv: Readonly<Record<string, string | undefined>>;
  /** Actions started so far (the quota counts them). */
  actionsUsed: number;
  /** Model tokens (input + output) used so far by the planner and the decider. */
  tokensUsed: number;
  /** Wall-clock deadline (ms since the epoch). */
  deadline: number;
  controller: AbortController;
  /** The guidance gate of the workdir's `.pulse/`, once there is one (checked before each plan step). */
  guidance?: GuidanceGate;
  emit(type: EnvelopeType, payload: Record<string, unknown>): Envelope;
  sleep(ms: number, signal: AbortSignal): Promise<void>;
}

export type AgentRuns = Map<string, AgentRun>;

/** What an iteration starts from: the previous one's evaluate_progress output, or the request. */
export interface IterationState {
  runId: string;
  plan: Plan | null;
  observations: string[];
  advisory?: Advisory;
  /** Consecutive wait decisions (three in a row end the run blocked, exhausted). */
  waits: number;
}

/** screen → plan. */
export interface Screened extends IterationState {
  guides: { id: string; score: number; ranks: Ranks; entry: GuideEntry }[];
  knowledge: { id: string; score: number; ranks: Ranks; entry: KnowledgeEntry }[];
  candidates: Candidate[];
  /** The guidance changed (the gate held this step): plan again, told what changed. */
  held?: HeldReplan;
  /** The plan the change invalidated. */
  invalidated?: Plan | null;
  /** What the online search did for this plan (only with online knowledge). */
  online?: OnlineOutcome;
}

/** plan → decide. */
export interface Planned extends Screened {
  plan: Plan;
}
