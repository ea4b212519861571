/**
 * The plan → decide → act agent (`pulse/agent`, seed 002) as a library: `createAgent` gives
 * `ask`, `getReport` and `submitFeedback` (and `plan`, `decide`, `action`), over the loop
 * `coding.plan_decide_act` hosted by the PULSE runtime. The pieces are exported too: screening
 * (BM25, reciprocal-rank fusion), the report summary, feedback rules, action discovery.
 */
export { createAgent, reportSummary, AgentError, type Agent, type AgentOptions, type AskOptions, type RunHandle } from "./api.js";
export { AgentRunner, AGENT_MANIFEST, type RunOutcome } from "./runner.js";
export { AGENT_LOOP_ID, AGENT_PHASES } from "./handlers.js";
export { parseConfig, loadConfig, initConfig, defaultHome, homePaths, ConfigError, type AgentConfig, type LlmEntry } from "./config.js";
export { summarize, mergeReports, type RunSummary, type ActionSummary } from "./summary.js";
export { readReport, rotateReports, ReportWriter, ReportError } from "./report.js";
export { validateFeedback, implicitFeedback, rescore, FeedbackError, type FeedbackStore, type FeedbackStored } from "./feedback.js";
export { generateStructured, clampTemperature, StructuredOutputError, type Llm, type LlmCall, type LlmReply } from "./llm.js";
export { discoverActions } from "./actions/discover.js";
export { validateArgs } from "./actions/args.js";
export { bm25, buildIndex, tokenize, substringMatch } from "./retrieval/bm25.js";
export { reciprocalRankFusion, cosine } from "./retrieval/fusion.js";
export { screen, type Strategy, type Screened } from "./retrieval/screen.js";
export { EmbeddingCache, type Embedder } from "./retrieval/embedding-cache.js";
export { loadGuides, loadKnowledge, CorpusError } from "./retrieval/corpus.js";
export type { ActionResult, ActionSpec, Advisory, Decision, Envelope, EnvelopeType, Feedback, GuideEntry, KnowledgeEntry, Plan, PlanStep, RunStatus } from "./types.js";
export type { AgentHooks, ExecutionMode } from "./run-state.js";
