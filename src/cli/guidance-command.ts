/**
 * `pulse guidance init|serve|status|ack|log`: the guidance sidecar of seed 004 (its `pulse
 * start` is `pulse guidance serve` here, since `pulse` is our binary). Every command works on
 * the `.pulse/` directory of --project (default: the working directory).
 */
import { resolve } from "node:path";
import type { Command } from "commander";
import { GuidanceError, GuidanceSidecar } from "../coding/guidance/sidecar.js";
import { GuidanceStateError } from "../coding/guidance/state.js";
import { EXIT, UsageError } from "./exit-codes.js";
import type { CliIO } from "./io.js";
import { setExitCode } from "./main.js";
import { parseCount } from "./guidance-options.js";

export const GUIDANCE_HELP = `
The agent's inbox for changed instructions (seed 004). Edit .pulse/guidance.md or
.pulse/constraints.md while an agent works; every change is recorded in .pulse/events.jsonl and
stays pending until the agent has updated .pulse/plan.md and acknowledged it
(pulse_ack_replan, or pulse guidance ack). See docs/guidance.md.

Examples:
  pulse guidance init                  create .pulse/ (task, guidance, constraints, plan, state, events)
  pulse guidance serve                 watch .pulse/ and serve MCP at http://127.0.0.1:8765/mcp
  pulse guidance serve --stdio         the same MCP server on standard input and output
  pulse guidance serve --signal-to http://127.0.0.1:3002 --session ID
                                       also steer that session of pulse serve on each guidance change
  pulse guidance status                whether the agent must replan, and which event is pending
  pulse guidance ack EVENT_ID          acknowledge the pending event (after updating plan.md)
  pulse guidance log --limit 20        the latest recorded changes`;

interface ProjectOpts {
  project?: string;
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

async function open(opts: ProjectOpts, io: CliIO): Promise<GuidanceSidecar> {
  return GuidanceSidecar.open({ root: resolve(io.cwd, opts.project ?? ".") });
}

async function guarded(cmd: Command, io: CliIO, body: () => Promise<number>): Promise<void> {
  try {
    setExitCode(cmd, await body());
  } catch (e) {
    if (e instanceof UsageError) {
      io.stderr(`pulse guidance: ${e.message}\n`);
      return setExitCode(cmd, EXIT.usage);
    }
    if (!(e instanceof GuidanceError || e instanceof GuidanceStateError || (e as NodeJS.ErrnoException)?.code)) throw e;
    io.stderr(`pulse guidance: ${(e as Error).message}\n`);
    setExitCode(cmd, EXIT.problems);
  }
}

function withProject(cmd: Command): Command {
  return cmd.option("-C, --project <dir>", "the project whose .pulse/ directory is used (default: the working directory)");
}

export function addGuidanceCommands(guidance: Command, io: CliIO): void {
  guidance.description("The guidance sidecar: change a running agent's direction through .pulse/ files, acknowledged and audited (seed 004).").addHelpText("after", GUIDANCE_HELP);

  withProject(guidance.command("init"))
    .description("Create .pulse/ with task.md, guidance.md, constraints.md, plan.md, state.json and events.jsonl; nothing that exists is overwritten.")
    .action((opts: ProjectOpts, cmd: Command) =>
      guarded(cmd, io, async () => {
        const r = (await open(opts, io)).init();
        io.stdout(`${r.dir}: ${r.created.length ? `created ${r.created.join(", ")}` : "nothing to create"}${r.kept.length ? `; kept ${r.kept.join(", ")} as they were` : ""}\n`);
        return EXIT.ok;
      }),
    );

  withProject(guidance.command("serve"))
    .description("Watch .pulse/ (every change recorded in events.jsonl) and serve the MCP sidecar: Streamable HTTP at http://127.0.0.1:8765/mcp, or stdio with --stdio.")
    .option("--port <n>", "the port (default 8765; 0: any free port)")
    .option("--host <address>", "the address to listen on (default 127.0.0.1; any other needs --token)")
    .option("--token <token>", "bearer token clients must send (default $PULSE_TOKEN); required off loopback")
    .option("--stdio", "serve MCP on standard input and output instead of HTTP")
    .option("--debounce <ms>", "quiet time after an edit before it is recorded (default 150)")
    .option("--allow-host <name>", "also accept requests addressed to this host name (repeatable)", collect)
    .option("--allow-origin <origin>", "also accept requests from web pages of this origin (repeatable)", collect)
    .option("--signal-to <url>", "also send each plan-invalidating change as a SurpriseSignal to pulse serve at this URL (e.g. http://127.0.0.1:3002); needs --session or --workflow; off loopback needs $PULSE_SIGNAL_TOKEN")
    .option("--session <id>", "with --signal-to: the session the signal steers")
    .option("--workflow <id>", "with --signal-to: the workflow the signal steers (instead of a session)")
    .action((opts: ProjectOpts & { port?: string; host?: string; token?: string; stdio?: boolean; debounce?: string; allowHost?: string[]; allowOrigin?: string[]; signalTo?: string; session?: string; workflow?: string }, cmd: Command) =>
      guarded(cmd, io, async () => {
        const { serveGuidance } = await import("./guidance-serve.js");
        return serveGuidance(await open(opts, io), opts, io);
      }),
    );

  withProject(guidance.command("status"))
    .description("Whether the agent must stop and replan: pulse_should_interrupt's answer (exit 0 either way).")
    .option("--last-seen <event_id>", "count new events after this one")
    .option("--json", "the answer as one JSON object")
    .action((opts: ProjectOpts & { lastSeen?: string; json?: boolean }, cmd: Command) =>
      guarded(cmd, io, async () => {
        const d = await (await open(opts, io)).shouldInterrupt(opts.lastSeen ?? null);
        if (opts.json) io.stdout(`${JSON.stringify(d)}\n`);
        else {
          io.stdout(d.needs_replan ? `replan needed: ${d.pending_replan_files.join(", ")} changed; pending event ${d.pending_replan_event_id}\n` : "no replan needed\n");
          io.stdout(`latest event: ${d.latest_event_id ?? "none"}; last acknowledged: ${d.last_acknowledged_event_id ?? "none"}${d.last_acknowledged_plan_sha256 ? ` (plan ${d.last_acknowledged_plan_sha256.slice(0, 12)})` : ""}\n${d.reason}\n`);
        }
        return EXIT.ok;
      }),
    );

  withProject(guidance.command("ack"))
    .description("Acknowledge the pending replan event (after updating .pulse/plan.md): exit 0 when accepted, 1 with the reason when refused.")
    .argument("[event_id]", "the pending_replan_event_id (pulse guidance status shows it)")
    .option("--json", "the answer as one JSON object")
    .action((eventId: string | undefined, opts: ProjectOpts & { json?: boolean }, cmd: Command) =>
      guarded(cmd, io, async () => {
        const d = await (await open(opts, io)).ack(eventId ?? null);
        if (opts.json) io.stdout(`${JSON.stringify(d)}\n`);
        else if (d.accepted) io.stdout(`acknowledged ${d.acknowledged_event_id} with plan.md ${d.plan_sha256 ?? "(missing)"}\n`);
        else io.stderr(`pulse guidance: refused: ${d.reason}\n`);
        return d.accepted ? EXIT.ok : EXIT.problems;
      }),
    );

  withProject(guidance.command("hook"))
    .description("What the hooks pulse installs in an agent CLI run (claude's PreToolUse and Stop) call: reads the hook's JSON on stdin; exit 2 with the reason on stderr blocks a mutating tool call (or the stop) while a replan is pending, exit 0 lets it go on.")
    .argument("<event>", "pre-tool-use or stop")
    .action((event: string, opts: ProjectOpts, cmd: Command) =>
      guarded(cmd, io, async () => {
        const { runGuidanceHook } = await import("./guidance-hook.js");
        return runGuidanceHook(event, resolve(io.cwd, opts.project ?? "."), io);
      }),
    );

  withProject(guidance.command("log"))
    .description("The recorded changes (.pulse/events.jsonl), oldest first.")
    .option("--limit <n>", "only the latest N")
    .option("--json", "JSON lines, as recorded")
    .action((opts: ProjectOpts & { limit?: string; json?: boolean }, cmd: Command) =>
      guarded(cmd, io, async () => {
        const limit = parseCount("--limit", opts.limit, 1, 1_000_000);
        const sidecar = await open(opts, io);
        sidecar.state();
        const events = sidecar.events().slice(limit === undefined ? 0 : -limit);
        for (const e of events) io.stdout(opts.json ? `${JSON.stringify(e)}\n` : `${e.id}  ${e.kind.padEnd(8)} ${e.path}  ${e.sha256 ? e.sha256.slice(0, 12) : "-"}  ${e.size ?? "-"} bytes\n`);
        if (events.length === 0 && !opts.json) io.stdout("no events recorded yet\n");
        return EXIT.ok;
      }),
    );
}
