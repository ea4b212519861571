/**
 * The pulsing workflow's profile (`profiles/coding/pulsing-workflow.profile.json`): the
 * settings its manifest has no field for, keyed by phase id, validated against its own JSON
 * Schema at load. A wrong value is refused naming the field.
 */
import { readFileSync } from "node:fs";
import { Ajv2020 } from "ajv/dist/2020.js";
import { packageFile, ProfileError } from "../session/profile.js";

export const WORKFLOW_LOOP_ID = "coding.pulsing_workflow";
export const WORKFLOW_MANIFEST = "manifests/coding/pulsing-workflow.yaml";
export const WORKFLOW_PROFILE = "profiles/coding/pulsing-workflow.profile.json";
const SCHEMA = "profiles/coding/pulsing-workflow.profile.schema.json";

export interface WorkflowProfile {
  limits: { maxTurnsPerPulse: number; maxNudges: number; maxRejections: number; autoExtension: boolean; maxCostUsd?: number };
  preflight: { timeoutMs: number };
  runPulse: { driver: string; model?: string; timeoutMs?: number; silenceTimeoutMs?: number; maxTurns?: number };
  validate: { checksTimeoutMs: number };
  recordOutcome: { controlPollMs: number };
  git: { branchPrefix: string };
}

let validate: ReturnType<Ajv2020["compile"]> | undefined;

export function loadWorkflowProfile(path: string = packageFile(WORKFLOW_PROFILE)): WorkflowProfile {
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(path, "utf8"));
  } catch (e) {
    throw new ProfileError(`${path}: ${(e as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (e as Error).message}`);
  }
  return parseWorkflowProfile(value, path);
}

export function parseWorkflowProfile(value: unknown, where = "profile"): WorkflowProfile {
  validate ??= new Ajv2020({ allErrors: true, strict: false }).compile(JSON.parse(readFileSync(packageFile(SCHEMA), "utf8")));
  if (!validate(value)) {
    const e = validate.errors![0]!;
    const extra = e.keyword === "additionalProperties" ? ` (${JSON.stringify((e.params as { additionalProperty: string }).additionalProperty)} is not a setting of this loop)` : "";
    throw new ProfileError(`${where}: ${e.instancePath || "/"} ${e.message}${extra}`);
  }
  const v = value as { limits?: Partial<WorkflowProfile["limits"]>; phases: { preflight?: Partial<WorkflowProfile["preflight"]>; run_pulse?: Partial<WorkflowProfile["runPulse"]>; validate_completion?: Partial<WorkflowProfile["validate"]>; record_outcome?: Partial<WorkflowProfile["recordOutcome"]> }; git?: Partial<WorkflowProfile["git"]> };
  return {
    limits: { maxTurnsPerPulse: 10, maxNudges: 3, maxRejections: 1, autoExtension: true, ...v.limits },
    preflight: { timeoutMs: 1_800_000, ...v.phases.preflight },
    runPulse: { driver: "claude", ...v.phases.run_pulse },
    validate: { checksTimeoutMs: 300_000, ...v.phases.validate_completion },
    recordOutcome: { controlPollMs: 250, ...v.phases.record_outcome },
    git: { branchPrefix: "pulse/workflow/", ...v.git },
  };
}
