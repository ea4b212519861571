/**
 * Where the pulsing workflow is assembled for the CLI: its records (SQLite, in the shared
 * `.pulse/pulse.db`), the profile, the agent processes and their reaper, the runtime with the
 * embedded defaults, the checks runner, and the drivers a workflow names (a CLI agent is handed
 * pulse's completion-tool server for its phase).
 */
import { resolve } from "node:path";
import { runChecks } from "../../adapters/agents/cli/checks.js";
import { createDriver } from "../../adapters/agents/create-driver.js";
import { ProcessReaper } from "../../adapters/agents/cli/reaper.js";
import { SqliteAgentProcesses } from "../../adapters/sqlite/agent-processes.js";
import { SqliteWorkflowRecords } from "../../adapters/sqlite/workflow-records.js";
import type { AgentProcesses } from "../coding/agent-processes.js";
import { loadWorkflowProfile, type WorkflowProfile } from "../coding/workflow/profile.js";
import type { WorkflowRecord, WorkflowRecords } from "../coding/workflow/records.js";
import { WorkflowRunner } from "../coding/workflow/runner.js";
import { createRuntime } from "../embedded.js";
import { UsageError } from "./exit-codes.js";
import { StoreError } from "../store/contracts.js";
import type { CliIO } from "./io.js";
import { sessionStoreOf } from "./session-setup.js";

export interface Workflows {
  records: WorkflowRecords;
  profile: WorkflowProfile;
  processes: AgentProcesses;
  reaper: ProcessReaper;
  /** The SQLite file or PostgreSQL URL, as another pulse process is given it (--store). */
  storePath: string;
  runner(): Promise<WorkflowRunner>;
  close(): Promise<void>;
}

export async function openWorkflows(o: { store?: string; profile?: string }, io: Pick<CliIO, "env" | "cwd" | "stderr">): Promise<Workflows> {
  const profile = loadWorkflowProfile(o.profile === undefined ? undefined : resolve(io.cwd, o.profile));
  const spec = sessionStoreOf(o.store, io);
  // Another process (stop, status, a resume after a crash) must find the workflow: a file or a database, not memory.
  if (spec.kind === "memory") throw new UsageError("--store: workflows are kept in a SQLite file (default .pulse/pulse.db) or PostgreSQL; memory: keeps nothing another command could stop or resume");
  const { records, processes } = spec.kind === "sqlite" ? { records: SqliteWorkflowRecords.open(spec.path), processes: SqliteAgentProcesses.open(spec.path) } : await openPostgres(spec.url, spec.flag, io);
  const storeArg = spec.kind === "sqlite" ? spec.path : spec.url;
  const reaper = new ProcessReaper(processes);
  return {
    records,
    profile,
    processes,
    reaper,
    storePath: storeArg,
    runner: async () =>
      WorkflowRunner.create({
        runtime: await createRuntime(),
        records,
        profile,
        processes,
        reaper,
        checks: (commands, c) => runChecks(commands, { ...c, parentEnv: io.env }),
        driverFor: (w, phase) => driverFor(w, phase, storeArg, io),
      }),
    close: async () => {
      await processes.close();
      await records.close();
    },
  };
}

/** Loaded only for a PostgreSQL store: the SQLite default does not pay for pg. */
async function openPostgres(url: string, flag: string, io: Pick<CliIO, "stderr">): Promise<{ records: WorkflowRecords; processes: AgentProcesses }> {
  const { PostgresWorkflowRecords } = await import("../../adapters/postgres/workflow-records.js");
  try {
    const records = await PostgresWorkflowRecords.open(url, { onNote: (m) => io.stderr(`pulse: ${m}\n`) });
    return { records, processes: records.agentProcesses() };
  } catch (error) {
    if (error instanceof StoreError) throw new UsageError(`${flag}: ${error.message}`);
    throw error;
  }
}

/**
 * The workflow's driver for a phase; a CLI agent gets `pulse workflow mcp --phase …`, the
 * completion tools of that phase, and in a pulse the guidance tools of its worktree (a replan
 * turn acknowledges through them).
 */
export function driverFor(w: Pick<WorkflowRecord, "driver"> & Partial<Pick<WorkflowRecord, "worktree_path">>, phase: "preflight" | "run_pulse", store: string, io: Pick<CliIO, "env">) {
  const guidance = phase === "run_pulse" && w.worktree_path ? ["--guidance", w.worktree_path] : [];
  const own = process.argv[1] ? { pulse: { command: process.execPath, args: [process.argv[1], "workflow", "mcp", "--phase", phase === "preflight" ? "preflight" : "pulse", "--store", store, ...guidance] } } : undefined;
  // A pulse's CLI agent gets pulse's guidance hooks where its CLI has them (steered inside the turn, docs/agents.md).
  const guidanceHook = process.argv[1] && phase === "run_pulse" ? { command: process.execPath, args: [process.argv[1], "guidance", "hook"] } : undefined;
  const cli = { ...(own ? { mcpServers: own } : {}), ...(guidanceHook ? { guidanceHook } : {}) };
  return createDriver({ name: w.driver.name, ...(w.driver.script ? { script: w.driver.script } : {}), env: io.env, ...(Object.keys(cli).length > 0 ? { cli } : {}) });
}
