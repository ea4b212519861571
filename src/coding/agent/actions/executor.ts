/**
 * How an action run is asked for (the contract; the subprocess runner is in
 * adapters/agents/actions). Arguments are checked here, before any executor sees them.
 */
import { randomUUID } from "node:crypto";
import type { SpawnInfo } from "../../../agents/contract.js";
import type { ActionResult, ActionSpec } from "../types.js";
import { validateArgs } from "./args.js";

export interface ActionRunContext {
  runId: string;
  actionRunId: string;
  /** The action's working directory (the run's). */
  workdir: string;
  /** The run's files (`--files`): what the agent handle may read, besides the action run's own folder. */
  files: string[];
  /** Where the action run's folder is made (`<runsDir>/<actionRunId>`). */
  runsDir: string;
  parentEnv: Readonly<Record<string, string | undefined>>;
  signal?: AbortSignal;
  onSpawn?: (info: SpawnInfo) => void;
  marker?: string;
  /** Seconds between SIGTERM and SIGKILL when the timeout hits (default 2). */
  killGraceSec?: number;
}

export type ActionExecutor = (spec: ActionSpec, args: Record<string, unknown>, ctx: ActionRunContext) => Promise<ActionResult>;

export const newActionRunId = (): string => randomUUID();

export function failedResult(spec: Pick<ActionSpec, "name">, actionRunId: string, ended: ActionResult["ended"], error: string): ActionResult {
  return { actionRunId, name: spec.name, status: "error", result: "", error, logs: [], stdout: "", stderr: "", ended, network: "none", durationMs: 0 };
}

/** Validates, then runs: a bad argument is an error result with the reasons, and nothing is started. */
export async function performAction(executor: ActionExecutor, spec: ActionSpec, args: unknown, ctx: ActionRunContext): Promise<ActionResult> {
  const errors = validateArgs(spec, args);
  if (errors.length > 0) return failedResult(spec, ctx.actionRunId, "invalid", `invalid arguments: ${errors.join("; ")}`);
  return executor(spec, args as Record<string, unknown>, ctx);
}
