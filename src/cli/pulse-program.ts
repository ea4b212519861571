/**
 * The `pulse` program with every command but `session` and `conform`, which pulse.ts loads on
 * their own so that their start-up does not pay for the others' modules.
 */
import { Command } from "commander";
import { addValidateOptions, runValidate, VALIDATE_DESCRIPTION, VALIDATE_HELP, type ValidateCliOptions } from "./validate-command.js";
import { addDiagramOptions, DIAGRAM_DESCRIPTION, DIAGRAM_HELP, type DiagramCliOptions } from "../diagram/cli-options.js";
import { addRunOptions, runRun, RUN_DESCRIPTION, RUN_HELP, type RunCliOptions } from "./run-command.js";
import { addDriversOptions, DRIVERS_DESCRIPTION, DRIVERS_HELP, runDrivers, type DriversCliOptions } from "./drivers-command.js";
import { runProgram, setExitCode } from "./main.js";
import { processIO } from "./io.js";
import { EXIT } from "./exit-codes.js";
import { VERSION } from "../version.js";
import { SESSION_DESCRIPTION } from "./pulse-session.js";
import { addServeOptions, SERVE_DESCRIPTION, SERVE_HELP, type ServeOptions } from "./serve-options.js";
import { addStoreMigrateOptions, STORE_MIGRATE_HELP } from "./store-migrate.js";
import { addAuditOptions, addStoreOption, AUDIT_HELP, type AuditCliOptions } from "./audit-command.js";
import { addMcpOptions, MCP_DESCRIPTION, MCP_HELP, type McpCliOptions } from "./mcp-options.js";
import { addStudioOptions, STUDIO_DESCRIPTION, STUDIO_HELP, type StudioCliOptions } from "./studio-options.js";
import { addSubstrateServeOptions, SUBSTRATE_SERVE_DESCRIPTION, SUBSTRATE_SERVE_HELP, type SubstrateServeOptions } from "./substrate-options.js";

export async function main(): Promise<void> {
  const io = processIO("pulse");
  const program = new Command("pulse")
    .description("PULSE (OS-010 v0.1) toolkit: validate manifests, run loops, certify runtimes.")
    .version(VERSION, "-V, --version")
    .action(() => {
      program.outputHelp({ error: true });
      setExitCode(program, EXIT.usage);
    });

  addValidateOptions(program.command("validate"))
    .description(VALIDATE_DESCRIPTION)
    .addHelpText("after", VALIDATE_HELP)
    .action(async (paths: string[], opts: ValidateCliOptions, cmd: Command) => {
      setExitCode(cmd, await runValidate(paths, opts, io));
    });

  addDiagramOptions(program.command("diagram"))
    .description(DIAGRAM_DESCRIPTION)
    .addHelpText("after", DIAGRAM_HELP)
    .action(async (paths: string[], opts: DiagramCliOptions, cmd: Command) => {
      // Loaded only when the subcommand runs, so `pulse validate` does not pay for it.
      const { runDiagram } = await import("./diagram-command.js");
      setExitCode(cmd, await runDiagram(paths, opts, io));
    });

  addRunOptions(program.command("run"))
    .description(RUN_DESCRIPTION)
    .addHelpText("after", RUN_HELP)
    .action(async (paths: string[], opts: RunCliOptions, cmd: Command) => {
      const stop = {
        onStop: (fn: () => void) => {
          // First Ctrl-C: graceful stop. A second one: stop now.
          let asked = false;
          const handler = () => {
            if (asked) {
              io.stderr("pulse run: stopped at once: iterations still running and signals not yet delivered are lost\n");
              process.exit(130);
            }
            asked = true;
            if (process.stderr.isTTY) io.stderr("pulse run: stopping (in-flight work finishes); press Ctrl-C again to stop at once\n");
            fn();
          };
          process.on("SIGINT", handler);
          process.on("SIGTERM", handler);
        },
      };
      setExitCode(cmd, await runRun(paths, opts, io, stop));
    });

  addDriversOptions(program.command("drivers"))
    .description(DRIVERS_DESCRIPTION)
    .addHelpText("after", DRIVERS_HELP)
    .action(async (opts: DriversCliOptions, cmd: Command) => setExitCode(cmd, await runDrivers(opts, io)));

  program
    .command("conform")
    .description("Certify a PULSE runtime against the twelve tests of spec §12 (the same as pulse-conform: see pulse conform --help).")
    .allowUnknownOption();

  const substrate = program.command("substrate").description("Serve substrates to other processes.");
  addSubstrateServeOptions(substrate.command("serve"))
    .description(SUBSTRATE_SERVE_DESCRIPTION)
    .addHelpText("after", SUBSTRATE_SERVE_HELP)
    .action(async (opts: SubstrateServeOptions, cmd: Command) => {
      const { runSubstrateServe } = await import("./substrate-command.js");
      setExitCode(cmd, await runSubstrateServe(opts, io, { onStop: (fn) => ["SIGINT", "SIGTERM"].forEach((s) => process.once(s, fn)) }));
    });

  // `pulse session …` runs from pulse-session.ts: here only its line in the help.
  program.command("session").description(SESSION_DESCRIPTION).allowUnknownOption();
  // Loaded when an agent command runs, like the session loop.
  if (process.argv[2] === "agent") {
    const { addAgentCommands } = await import("./agent-command.js");
    addAgentCommands(program.command("agent"), io);
  } else program.command("agent").description("The plan → decide → act agent: guides, knowledge and actions in its home (pulse agent --help).").allowUnknownOption();

  if (process.argv[2] === "workflow") {
    const { addWorkflowCommands } = await import("./workflow-command.js");
    addWorkflowCommands(program.command("workflow"), io);
  } else program.command("workflow").description("The pulsing workflow: a plan's pulses, each one verified commit in a worktree of its own (pulse workflow --help).").allowUnknownOption();

  if (process.argv[2] === "guidance") {
    const { addGuidanceCommands } = await import("./guidance-command.js");
    addGuidanceCommands(program.command("guidance"), io);
  } else program.command("guidance").description("The guidance sidecar: change a running agent's direction through .pulse/ files, acknowledged and audited (pulse guidance --help).").allowUnknownOption();

  addServeOptions(program.command("serve"))
    .description(SERVE_DESCRIPTION)
    .addHelpText("after", SERVE_HELP)
    .action(async (opts: ServeOptions, cmd: Command) => {
      const { runServe } = await import("./serve-command.js");
      setExitCode(cmd, await runServe(opts, io, { onStop: (fn) => ["SIGINT", "SIGTERM"].forEach((s) => process.once(s, fn)) }));
    });

  addStudioOptions(program.command("studio"))
    .description(STUDIO_DESCRIPTION)
    .addHelpText("after", STUDIO_HELP)
    .action(async (paths: string[], opts: StudioCliOptions, cmd: Command) => {
      const { runStudio } = await import("./studio-command.js");
      setExitCode(cmd, await runStudio(paths, opts, io, { onStop: (fn) => ["SIGINT", "SIGTERM"].forEach((s) => process.once(s, fn)) }));
    });

  addMcpOptions(program.command("mcp"))
    .description(MCP_DESCRIPTION)
    .addHelpText("after", MCP_HELP)
    .action(async (paths: string[], opts: McpCliOptions, cmd: Command) => {
      const { runMcp } = await import("./mcp-command.js");
      setExitCode(cmd, await runMcp(paths, opts, io, { onStop: (fn) => ["SIGINT", "SIGTERM"].forEach((s) => process.once(s, fn)) }));
    });

  program
    .command("runs")
    .option("--store <spec>", "a SQLite file (default $PULSE_STORE, else .pulse/pulse.db) or postgres://…; an agent keeps its runs in its home's agent.db unless run with --store")
    .description("Every coding loop's runs (sessions, workflows, agent runs), newest first: status, iteration x/N, commits, spend.")
    .option("--kind <kind>", "only session, workflow or agent runs")
    .option("--json", "the runs as a JSON array (the common run view)")
    .action(async (opts: { store?: string; kind?: string; json?: boolean }, cmd: Command) => {
      const { runRuns } = await import("./runs-command.js");
      setExitCode(cmd, await runRuns(opts, io));
    });
  const store = program.command("store").description("Administer a pulse store.");
  addStoreMigrateOptions(store.command("migrate"))
    .description("Create or update a PostgreSQL store's schema and roles (run with an owner's credentials).")
    .addHelpText("after", STORE_MIGRATE_HELP)
    .action(async (opts: { store: string; appPassword?: string }, cmd: Command) => {
      const { runStoreMigrate } = await import("./store-migrate.js");
      setExitCode(cmd, await runStoreMigrate(opts, io));
    });

  addStoreOption(store.command("info"))
    .description("What a store holds: its location, schema version, size and rows per table.")
    .option("--json", "one JSON object")
    .action(async (opts: { store?: string; json?: boolean }, cmd: Command) => {
      const { runStoreInfo } = await import("./store-command.js");
      setExitCode(cmd, await runStoreInfo(opts, io));
    });
  addStoreOption(store.command("vacuum"))
    .description("Compact a SQLite store's file (checkpoint its WAL, rebuild it); stop the runs using it first.")
    .action(async (opts: { store?: string }, cmd: Command) => {
      const { runStoreVacuum } = await import("./store-command.js");
      setExitCode(cmd, await runStoreVacuum(opts, io));
    });
  addStoreOption(store.command("export"))
    .description("Every row of a SQLite or PostgreSQL store as JSON lines ({table, row}), streamed, for backups and other tools.")
    .option("--jsonl", "JSON lines (the only format)")
    .action(async (opts: { store?: string; jsonl?: boolean }, cmd: Command) => {
      const { runStoreExport } = await import("./store-command.js");
      setExitCode(cmd, await runStoreExport(opts, io));
    });

  const audit = addAuditOptions(program.command("audit"))
    .description("The audit trail a store keeps: readable, filterable, paged.")
    .addHelpText("after", AUDIT_HELP)
    .action(async (opts: AuditCliOptions, cmd: Command) => {
      const { runAudit } = await import("./audit-command.js");
      setExitCode(cmd, await runAudit(opts, io));
    });
  addStoreOption(audit.command("verify"))
    .description("Check every workspace's audit hash chain: ok with counts, or the first broken link (exit 1).")
    .option("-w, --workspace <id>", "only this workspace's chain")
    .option("--json", "one JSON object")
    .action(async (_opts: unknown, cmd: Command) => {
      const { runAuditVerify } = await import("./audit-command.js");
      // `pulse audit --store X verify` and `pulse audit verify --store X` alike.
      setExitCode(cmd, await runAuditVerify(cmd.optsWithGlobals<{ store?: string; workspace?: string; json?: boolean }>(), io));
    });

  process.exitCode = await runProgram(program, process.argv.slice(2), io, "pulse");
}
