/**
 * Starting a workflow, the same from the CLI, REST and MCP: the plan read, the repository and
 * base checked, the driver built once (an unknown one, a bad script), the merge mode and base
 * checked, and only then the workflow and its pulses recorded. Every refusal is a
 * WorkflowInputError naming its field; nothing is recorded then.
 */
import { randomUUID } from "node:crypto";
import { basename } from "node:path";
import { currentBranch, git } from "../git.js";
import { repoRoot, SessionRepoError } from "../session/repo.js";
import { parsePlan, PlanError } from "./plan.js";
import type { WorkflowProfile } from "./profile.js";
import { MERGE_MODES, type MergeMode, type WorkflowDriver, type WorkflowRecord, type WorkflowRecords } from "./records.js";
import { planWorkflowWorkspace, WorkflowInputError } from "./workspace.js";

export interface WorkflowStart {
  /** The plan's text (Markdown or JSON), and its name (a file name: `.json` reads JSON). */
  plan: string;
  planName: string;
  planPath?: string;
  repo: string;
  base?: string;
  branch?: string;
  driver?: string;
  script?: string;
  model?: string;
  verify?: string[];
  merge?: string;
}

export interface StartDeps {
  records: WorkflowRecords;
  profile: WorkflowProfile;
  /** Where worktrees go. */
  worktreesDir: string;
  /** Builds the driver once (throws when it cannot be built); a missing CLI is a string. */
  checkDriver(driver: WorkflowDriver): string | undefined;
}

export async function startWorkflow(input: WorkflowStart, deps: StartDeps): Promise<WorkflowRecord> {
  let plan;
  try {
    plan = parsePlan(input.plan, input.planName);
  } catch (e) {
    if (e instanceof PlanError) throw new WorkflowInputError("plan", e.message);
    throw e;
  }
  const verify = input.verify ?? [];
  if (verify.some((c) => typeof c !== "string" || !c.trim())) throw new WorkflowInputError("verify", "an empty command");
  if (input.merge !== undefined && !MERGE_MODES.includes(input.merge as MergeMode)) throw new WorkflowInputError("merge", `${JSON.stringify(input.merge)} is not one of ${MERGE_MODES.join(", ")}`);
  const name = input.driver ?? deps.profile.runPulse.driver;
  if (name === "scripted" && !input.script) throw new WorkflowInputError("script", "the scripted driver needs a script (--script FILE)");
  if (input.script && name !== "scripted") throw new WorkflowInputError("script", `a script is for the scripted driver, not ${name}`);
  const driver: WorkflowDriver = { name, ...(input.script ? { script: input.script } : {}), ...(input.model ? { model: input.model } : {}) };
  let missing: string | undefined;
  try {
    missing = deps.checkDriver(driver);
  } catch (e) {
    throw new WorkflowInputError((e as Error).name === "ScriptError" ? "script" : "driver", (e as Error).message);
  }
  if (missing) throw new WorkflowInputError("driver", missing);
  let repo: string;
  try {
    repo = await repoRoot(input.repo);
  } catch (e) {
    if (e instanceof SessionRepoError) throw new WorkflowInputError("repo", e.message.replace(/^--repo /, ""));
    throw e;
  }
  if (input.merge) {
    const base = input.base ?? (await currentBranch(repo));
    const isBranch = base !== null && (await git(repo, ["rev-parse", "--verify", "-q", `refs/heads/${base}`], { allowFail: true })).code === 0;
    if (!isBranch) throw new WorkflowInputError("merge", `the base ${input.base ? JSON.stringify(input.base) : "(the current HEAD)"} is not a branch to merge into: name one with --base`);
  }
  const id = randomUUID();
  const where = await planWorkflowWorkspace(repo, id, { ...(input.base ? { base: input.base } : {}), ...(input.branch ? { branch: input.branch } : {}), prefix: deps.profile.git.branchPrefix, dir: deps.worktreesDir });
  return deps.records.create(
    { id, title: plan.title ?? basename(input.planName), plan_path: input.planPath ?? null, repo_path: repo, ...where, driver, verify: { checks: verify }, ...(input.merge ? { merge: input.merge as MergeMode } : {}) },
    plan.pulses.map((p, i) => ({ id: randomUUID(), number: i + 1, title: p.title, description: p.description, ...(p.id ? { planned_pulse_id: p.id } : {}) })),
  );
}
