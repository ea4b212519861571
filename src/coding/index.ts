/**
 * The coding kit (`pulse/coding`): what every built-in coding loop shares. Signals, git
 * evidence, worktrees, limits and the progress breaker, notifier, cost ledger; and the session
 * loop (seed 000) built on them, with its records contract.
 */
export { resolveSignal, stripCode, type Signal, type SignalSource, type ResolvedSignal, type ResolveInput } from "./signals.js";
export { startEvidence, collectEvidence, type EvidenceStart, type WorkspaceEvidence, type Commit } from "./evidence.js";
export { createWorktree, removeWorktree, lockWorktree, checkpoint, recoveryCommit, fastForward, WorktreeError, type Worktree, type WorktreeLock, type CreateWorktreeOptions, type RemoveOptions } from "./worktree.js";
export { resolveLimits, DEFAULT_LIMITS, STOP_REASONS, LimitsError, type Limits, type StopReason } from "./limits.js";
export { LoopGuard, type BreakerState, type GuardState, type IterationReport, type Verdict, type Stop } from "./progress-breaker.js";
export { Notifier, terminalChannel, webhookChannel, desktopChannel, messages, type Notification, type NotificationKind, type NotifierChannel, type NotifierOptions } from "./notifier.js";
export { CostLedger, DEFAULT_PRICES, priceOf, costOf, type Price, type PriceTable, type LedgerEntry, type LedgerTotals, type CostSource } from "./cost-ledger.js";
export { phaseAuditSink, substrateAuditSink, type AuditSink } from "./audit-sink.js";
export { GitError } from "./git.js";
export { SessionRunner, SessionError, type SessionRunnerOptions } from "./session/runner.js";
export { SessionService, SessionInputError, SessionStateError, startInputOf, type StartInput, type SessionDetail } from "./session/service.js";
export { loadSessionProfile, parseSessionProfile, ProfileError, SESSION_LOOP_ID, type SessionProfile } from "./session/profile.js";
export { resolveAnchor, type ResolvedAnchor, type Turn } from "./session/anchors.js";
export type { SessionRecords, SessionRecord, IterationRecord, SessionStatus, IterationStatus, ContextStrategy, AnchorStrategy, NewSession } from "./session/records.js";
export type { SessionEvent } from "./session/run-state.js";
export { WorkflowRunner, WorkflowError, type WorkflowRunnerOptions } from "./workflow/runner.js";
export { startWorkflow, type WorkflowStart } from "./workflow/service.js";
export { loadWorkflowProfile, parseWorkflowProfile, WORKFLOW_LOOP_ID, type WorkflowProfile } from "./workflow/profile.js";
export { parsePlan, PlanError, type Plan, type PlannedPulse } from "./workflow/plan.js";
export type { WorkflowRecords, WorkflowRecord, PulseRecord, PreflightSetup, PreflightBaseline, WorkflowStatus, PulseStatus, MergeMode } from "./workflow/records.js";
export { recordProcesses, type ProcessRecording } from "./agent-processes.js";
export { pulseDoneTool, REQUEST_EXTENSION_TOOL, PREFLIGHT_DONE_TOOL, RECORD_BASELINE_TOOL, PULSE_SIGNAL_TOOL, isToolCall } from "./completion-tools.js";
export { GuidanceSidecar, GuidanceError, guidanceLoop, initGuidance, GUIDANCE_LOOP_ID, GUIDANCE_MANIFEST, type InitResult } from "./guidance/sidecar.js";
export { GuidanceGate, replanBriefing, type HeldReplan, type ReplanAck } from "./guidance/gate.js";
export { watchGuidance, type GuidanceWatcher, type WatchOptions } from "./guidance/watcher.js";
export { shouldInterrupt, judgeAck, pendingEvents, isPlanInvalidating, INVALIDATING_PATHS, type InterruptDecision, type AckDecision } from "./guidance/policy.js";
export { parseEvents, eventId, type GuidanceEvent, type ChangeKind } from "./guidance/events.js";
export { compileContext, quoteAsData } from "./guidance/context.js";
export { steerSession, type Steered } from "./session/steer.js";
