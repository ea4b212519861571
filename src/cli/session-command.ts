/**
 * `pulse session start|list|status|logs|pause|resume|abort|mcp`: autonomous coding sessions
 * (the coding.pulse_session loop) from the terminal. A session runs in the foreground with a
 * live view, or detached; any other pulse process steers it through the shared records.
 */
import type { Command } from "commander";
import { ProfileError } from "../coding/session/profile.js";
import { SessionRecordsError } from "../coding/session/records.js";
import { SessionRepoError } from "../coding/session/repo.js";
import { SessionError } from "../coding/session/session-error.js";
import { budgetsOf, durationOf, SessionInputError, SessionStateError } from "../coding/session/service.js";
import { lockWorktree, WorktreeError } from "../coding/worktree.js";
import { cleanText, cleanWorktrees } from "../coding/session/clean.js";
import { worktreesDir } from "../coding/session/workspace.js";
import { StoreError } from "../store/contracts.js";
import { EXIT, UsageError } from "./exit-codes.js";
import type { CliIO } from "./io.js";
import { setExitCode } from "./main.js";
import { openSessions, STORE_HELP } from "./session-setup.js";
import { printEvents } from "./session-events.js";
import { listText, logText, sessionSummary, statusText } from "./session-view.js";
import { runOrDetach, stopGraceOf, type RunOpts, type StoreOpts } from "./session-run.js";

export { SESSION_EXIT } from "./session-run.js";

export const SESSION_HELP = `
A session iterates an agent on a goal in a git repository until it signals COMPLETE or
BLOCKED, or a limit stops it (manifests/coding/session.yaml, settings in profiles/coding/session.profile.json).

  pulse session start --goal "Add a /health endpoint" --repo . --driver claude
  pulse session list --status running
  pulse session pause ID      # after the current iteration
  pulse session resume ID     # a paused, blocked, failed or crashed session
  pulse session abort ID      # now: stops the agent, keeps its work in a recovery commit
  pulse session clean         # removes ended sessions' worktrees (their branches stay)

Each session works in a git worktree of its own, outside the repository ($PULSE_WORKTREES, else
$XDG_STATE_HOME/pulse/worktrees), on branch pulse/session/<short id> (or --branch) from HEAD (or
--base): your checkout is never touched. pulse session status ID says how to review and merge it.
--in-place works in your checkout instead, and refuses a dirty one unless --allow-dirty.

SIGTERM or a first Ctrl-C pauses: a turn still going after --stop-grace seconds (default 10)
is stopped, its work kept in a recovery commit; a second signal stops it at once.

--notify telegram:CHAT_ID | sms:+NUMBER | discord:URL | slack:URL | webhook:URL | desktop (repeatable)
also sends each notification there; secrets from the environment: TELEGRAM_BOT_TOKEN,
TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN, TWILIO_FROM (docs/sessions.md, Notifications).

Every command takes --store (default $PULSE_STORE or .pulse/pulse.db; postgres://…?schema=name
for a PostgreSQL store, after pulse store migrate); an ID may be shortened
to a unique prefix of at least 4 characters. Exit codes of start and resume: 0 complete or
paused, 1 failed or aborted, 2 usage error, 4 blocked.`;

interface ResumeOpts extends RunOpts {
  turnTimeout?: string;
  silenceTimeout?: string;
  maxCost?: string;
  maxTokens?: string;
  maxWall?: string;
}

interface McpOpts extends StoreOpts {
  session?: string;
  history?: boolean;
  allowScripts?: string[];
  maxSessions?: string;
}

interface StartOpts extends RunOpts {
  goal: string;
  repo?: string;
  driver?: string;
  script?: string;
  model?: string;
  branch?: string;
  base?: string;
  inPlace?: boolean;
  allowDirty?: boolean;
  anchor?: string;
  context?: string;
  name?: string;
  turnTimeout?: string;
  silenceTimeout?: string;
  verify?: string[];
  verifyEach?: boolean;
  maxCost?: string;
  maxTokens?: string;
  maxWall?: string;
}

const collect = (v: string, prev: string[]) => [...prev, v];

function withStore(cmd: Command): Command {
  return cmd
    .option("--store <path>", STORE_HELP)
    .option("--profile <file>", "a loop profile instead of profiles/coding/session.profile.json")
    .option("--no-color", "no colour in the output (NO_COLOR is honoured too)");
}

/** The flags of `start` by the service's field names: a refusal names what the person typed. */
const START_FLAGS: Record<string, string> = {
  goal: "--goal", repo: "--repo", driver: "--driver", script: "--script", model: "--model", maxIterations: "--max-iterations", branch: "--branch", base: "--base",
  inPlace: "--in-place", allowDirty: "--allow-dirty", anchor: "--anchor", contextStrategy: "--context", projectName: "--name", turnTimeout: "--turn-timeout",
  silenceTimeout: "--silence-timeout", maxCost: "--max-cost", maxTokens: "--max-tokens", maxWall: "--max-wall", verify: "--verify",
};

function asFlag(e: unknown): unknown {
  if (!(e instanceof SessionInputError) || !START_FLAGS[e.field]) return e;
  return new SessionInputError(START_FLAGS[e.field]!, e.message.slice(e.field.length + 2));
}

/** Budgets: reaching one pauses the session after the turn; resume with a raised cap goes on. */
function withBudgets(cmd: Command, verb: string): Command {
  return cmd
    .option("--max-cost <usd>", `${verb} the spend (US dollars, across resumes) at which the session pauses, e.g. 5`)
    .option("--max-tokens <n>", `${verb} the tokens (across resumes) at which the session pauses`)
    .option("--max-wall <duration>", `${verb} the time its turns may take in all (across resumes) before it pauses, e.g. 8h`);
}

const BUDGET_FLAGS = { maxCost: "--max-cost", maxTokens: "--max-tokens", maxWall: "--max-wall" };

function withRun(cmd: Command): Command {
  return withStore(cmd)
    .option("--detach", "run in the background; follow with pulse session logs ID --follow")
    .option("--json", "print the live view as JSON lines")
    .option("--notify <channel>", "also notify telegram:CHAT_ID, sms:+NUMBER, discord:URL, slack:URL, webhook:URL (or an https:// URL) or desktop; secrets from the environment (docs/sessions.md); repeatable", collect, [])
    .option("--stop-grace <seconds>", "on SIGTERM or a first Ctrl-C, how long the current turn may go on before it is stopped (default 10)");
}

/** Runs a command body, turning every error a person can fix into one line and an exit code. */
async function guarded(cmd: Command, io: CliIO, body: () => Promise<number>): Promise<void> {
  try {
    setExitCode(cmd, await body());
  } catch (e) {
    const usage = e instanceof SessionInputError || e instanceof ProfileError || e instanceof SessionRepoError || e instanceof UsageError;
    const known = usage || e instanceof SessionStateError || e instanceof SessionError || e instanceof StoreError || e instanceof SessionRecordsError || (e as Error)?.name === "DriverSpecError" || (e as Error)?.name === "ScriptError" || (e as Error)?.name === "LimitsError";
    if (!known) throw e;
    io.stderr(`pulse session: ${(e as Error).message}\n`);
    setExitCode(cmd, usage ? EXIT.usage : EXIT.problems);
  }
}

export function addSessionCommands(session: Command, io: CliIO): void {
  session.description("Autonomous coding sessions: an agent iterating on a goal in a git repository (seed 000).").addHelpText("after", SESSION_HELP);

  withRun(session.command("start"))
    .description("Start a session, in the foreground with a live view (iteration, signal, commit, files, tokens, cost) unless --detach.")
    .requiredOption("--goal <text>", "what the agent is to achieve")
    .option("--repo <path>", "the git repository it works in", ".")
    .option("--driver <name>", "claude, codex, gemini, qwen, opencode, openai, scripted, … (pulse drivers lists them; default from the profile)")
    .option("--script <file>", "the scripted driver's steps (JSON or YAML)")
    .option("--model <name>", "the model the driver asks for")
    .option("--max-iterations <n>", "stop after this many iterations (default 10)")
    .option("--branch <name>", "the session's branch (default pulse/session/<short id>; with --in-place: switched to, created from HEAD when new)")
    .option("--base <ref>", "the commit its branch starts from (default HEAD of --repo)")
    .option("--in-place", "work in the repository's own checkout instead of a worktree of its own (refuses a dirty checkout)")
    .option("--allow-dirty", "with --in-place: accept uncommitted and untracked files (the agent's commits may take them)")
    .option("--anchor <turn>", "the turn the first iteration starts from (explicit anchor)")
    .option("--context <strategy>", "none, prefetch, mcp or hybrid (default from the profile)")
    .option("--name <project>", "the project's name (default: the repository's directory)")
    .option("--turn-timeout <duration>", "a turn's wall-clock limit, e.g. 20m (default: the profile's, else the driver preset's, else 15m)")
    .option("--silence-timeout <duration>", "how long an agent may print nothing before it is stopped, e.g. 5m (default: the profile's, else the preset's, else 5m)")
    .option("--verify <command>", "a check pulse runs itself in the session's worktree (repeatable), e.g. 'npm test': its baseline is taken before the first turn, and a COMPLETE that adds a failure is rejected", collect, [])
    .option("--verify-each", "run the checks after every iteration, not only on a COMPLETE");
  withBudgets(session.commands.at(-1)!, "set")
    .action((opts: StartOpts, cmd: Command) =>
      guarded(cmd, io, async () => {
        stopGraceOf(opts);
        // Checked before anything is opened, naming the flag.
        budgetsOf(opts, BUDGET_FLAGS);
        const sessions = await openSessions(opts, io);
        try {
          sessions.notifyChannels(opts.notify ?? []);
          const s = await sessions.service
            .create(
              { goal: opts.goal, repo: opts.repo, driver: opts.driver, script: opts.script, model: opts.model, maxIterations: opts.maxIterations, branch: opts.branch, base: opts.base, inPlace: opts.inPlace, allowDirty: opts.allowDirty, anchor: opts.anchor, contextStrategy: opts.context, projectName: opts.name, turnTimeout: opts.turnTimeout, silenceTimeout: opts.silenceTimeout, verify: opts.verify ?? [], ...(opts.verifyEach ? { verifyEach: true } : {}), maxCost: opts.maxCost, maxTokens: opts.maxTokens, maxWall: opts.maxWall },
              "cli",
              inPlaceFree,
            )
            .catch((e: unknown) => {
              throw asFlag(e);
            });
          return await runOrDetach(sessions, s, opts, io);
        } finally {
          await sessions.close();
        }
      }),
    );

  withRun(session.command("resume"))
    .description("Resume a paused, blocked or failed session, or one whose runner died (its interrupted iteration is kept in a recovery commit).")
    .argument("<id>", "session id (or a unique prefix)")
    .option("--max-iterations <n>", "raise the session's iteration limit")
    .option("--turn-timeout <duration>", "change a turn's wall-clock limit, e.g. 30m")
    .option("--silence-timeout <duration>", "change how long an agent may print nothing, e.g. 10m");
  withBudgets(session.commands.at(-1)!, "raise (or set)")
    .action((id: string, opts: ResumeOpts, cmd: Command) =>
      guarded(cmd, io, async () => {
        stopGraceOf(opts);
        const budgets = budgetsOf(opts, BUDGET_FLAGS);
        const sessions = await openSessions(opts, io);
        try {
          sessions.notifyChannels(opts.notify ?? []);
          const { session, live } = await sessions.service.get(id);
          if (live && session.runner_pid !== process.pid) throw new SessionStateError("NOT_RUNNING", `session ${session.id} is running (process ${session.runner_pid}); pause it first`);
          let s = session;
          if (opts.maxIterations !== undefined) {
            const n = Number(opts.maxIterations);
            if (!/^\d+$/.test(opts.maxIterations) || n < 1 || n > 1000) throw new SessionInputError("--max-iterations", `must be a whole number from 1 to 1000, got ${JSON.stringify(opts.maxIterations)}`);
            s = await sessions.records.update(s.id, { max_iterations: n });
          }
          const timeoutMs = durationOf("--turn-timeout", opts.turnTimeout);
          const silenceTimeoutMs = durationOf("--silence-timeout", opts.silenceTimeout);
          if (timeoutMs || silenceTimeoutMs) s = await sessions.records.update(s.id, { driver: { ...s.driver, ...(timeoutMs ? { timeoutMs } : {}), ...(silenceTimeoutMs ? { silenceTimeoutMs } : {}) } });
          if (Object.keys(budgets).length > 0) s = await sessions.records.update(s.id, budgets);
          return await runOrDetach(sessions, s, opts, io);
        } finally {
          await sessions.close();
        }
      }),
    );

  withStore(session.command("list"))
    .description("List sessions, newest first.")
    .option("--status <status>", "only sessions with this status (pending, running, complete, blocked, failed, aborted, paused)")
    .option("--json", "print JSON")
    .action((opts: StoreOpts & { status?: string; json?: boolean }, cmd: Command) =>
      guarded(cmd, io, async () => {
        const sessions = await openSessions(opts, io);
        try {
          const list = await sessions.service.list(opts.status);
          io.stdout(opts.json ? `${JSON.stringify(list, null, 2)}\n` : listText(list));
          return EXIT.ok;
        } finally {
          await sessions.close();
        }
      }),
    );

  withStore(session.command("status"))
    .description("A session's status and the evidence of each iteration.")
    .argument("<id>", "session id (or a unique prefix)")
    .option("--json", "print JSON: the session and its iterations")
    .action((id: string, opts: StoreOpts & { json?: boolean }, cmd: Command) =>
      guarded(cmd, io, async () => {
        const sessions = await openSessions(opts, io);
        try {
          const d = await sessions.service.get(id);
          io.stdout(opts.json ? `${JSON.stringify(d, null, 2)}\n` : statusText(d.session, d.iterations, d.live));
          return EXIT.ok;
        } finally {
          await sessions.close();
        }
      }),
    );

  withStore(session.command("logs"))
    .description("What the agent said in each iteration; --follow waits for new ones until the session stops running.")
    .argument("<id>", "session id (or a unique prefix)")
    .option("-f, --follow", "keep printing iterations (or events) as they come, until the session stops running")
    .option("--events", "the session's event stream instead: the live view's lines, from any process")
    .option("--json", "with --events: the events as JSON lines")
    .action((id: string, opts: StoreOpts & { follow?: boolean; events?: boolean; json?: boolean }, cmd: Command) =>
      guarded(cmd, io, async () => {
        if (opts.json && !opts.events) throw new UsageError("--json goes with --events (the event stream as JSON lines)");
        const sessions = await openSessions(opts, io);
        try {
          if (opts.events) {
            await printEvents(sessions.service, id, opts, io);
            return EXIT.ok;
          }
          const printed = new Set<string>();
          for (;;) {
            const d = await sessions.service.get(id);
            for (const i of d.iterations) {
              if (printed.has(i.id) || (!i.finished_at && opts.follow)) continue;
              printed.add(i.id);
              io.stdout(logText(d.session, i));
            }
            const active = d.session.status === "running" || (d.session.status === "pending" && opts.follow);
            if (!opts.follow || !active) {
              if (opts.follow) io.stdout(`${sessionSummary(d.session)}\n`);
              return EXIT.ok;
            }
            await new Promise((r) => setTimeout(r, 250));
          }
        } finally {
          await sessions.close();
        }
      }),
    );

  for (const [name, what] of [
    ["pause", "Pause a session after its current iteration."],
    ["abort", "Abort a session now: its agent is stopped, unfinished work kept in a recovery commit."],
  ] as const) {
    withStore(session.command(name))
      .description(what)
      .argument("<id>", "session id (or a unique prefix)")
      .option("--no-wait", "return once the request is recorded, without waiting for the runner")
      .action((id: string, opts: StoreOpts & { wait?: boolean }, cmd: Command) =>
        guarded(cmd, io, async () => {
          const sessions = await openSessions(opts, io);
          try {
            const r = name === "pause" ? await sessions.service.pause(id) : await sessions.service.abort(id);
            let s = r.session;
            if (!r.immediate && opts.wait !== false) {
              // Abort takes effect at once; a pause only after the iteration, which may take long.
              s = await sessions.service.settle(s.id, (x) => x.control === null || x.status !== "running", name === "abort" ? 15_000 : 1_000);
            }
            io.stdout(s.status === "running" ? `session ${s.id}: ${name} requested; the runner (process ${s.runner_pid}) ${name === "pause" ? "pauses after the current iteration" : "is stopping"}\n` : `session ${s.id}: ${sessionSummary(s)}\n`);
            return EXIT.ok;
          } finally {
            await sessions.close();
          }
        }),
      );
  }

  withStore(session.command("steer"))
    .description("Change a session's direction: the text goes into the guidance of its working directory (.pulse/guidance.md); the session holds before its next iteration until its agent has replanned and acknowledged.")
    .argument("<id>", "session id (or a unique prefix)")
    .argument("<text>", "the new guidance")
    .action((id: string, text: string, opts: StoreOpts, cmd: Command) =>
      guarded(cmd, io, async () => {
        const sessions = await openSessions(opts, io);
        try {
          const { steerSession } = await import("../coding/session/steer.js");
          const r = await steerSession(sessions.service.records, id, text, "cli");
          io.stdout(r.deferred ? `session ${r.session.id}: steer recorded; it has no working directory now (${r.session.status}): the guidance is written to ${r.file} and replanned when it is resumed (pulse session resume ${r.session.id.slice(0, 8)})\n` : `session ${r.session.id}: steered (event ${r.event!.id} in ${r.file}); ${r.session.status === "running" ? "it holds before its next iteration until the agent acknowledges" : `it replans when it runs again (now ${r.session.status})`}\n`);
          return EXIT.ok;
        } finally {
          await sessions.close();
        }
      }),
    );

  withStore(session.command("clean"))
    .description("Remove the worktrees of sessions that ended (their branches stay; uncommitted work is kept in a recovery commit first), and report worktrees no session owns.")
    .argument("[id]", "only this session's worktree (a paused one too)")
    .option("--dry-run", "say what would be removed, remove nothing")
    .option("--force", "also remove worktrees no session of this store owns (after a recovery commit when dirty)")
    .action((id: string | undefined, opts: StoreOpts & { dryRun?: boolean; force?: boolean }, cmd: Command) =>
      guarded(cmd, io, async () => {
        const sessions = await openSessions(opts, io);
        try {
          const only = id === undefined ? undefined : (await sessions.service.get(id)).session;
          if (only && !only.worktree_path) throw new SessionStateError("NOT_RUNNING", `session ${only.id} works in place in ${only.repo_path}: it has no worktree to clean`);
          const actions = await cleanWorktrees(await sessions.service.list(), { dir: worktreesDir(io.env), ...(only ? { only } : {}), dryRun: opts.dryRun === true, force: opts.force === true });
          io.stdout(cleanText(actions, opts.dryRun === true));
          return EXIT.ok;
        } finally {
          await sessions.close();
        }
      }),
    );

  withStore(session.command("mcp"))
    .description("Serve the session tools (pulse_start, pulse_status, pulse_pause, pulse_resume, pulse_abort, pulse_list) over MCP on stdio.")
    .option("--session <id>", "serve only this session's agent tools: pulse_signal, and pulse_status of this session (what an agent of the session is given)")
    .option("--no-history", "with --session: leave out pulse_status (the none and prefetch context strategies)")
    .option("--allow-scripts <dir>", "let pulse_start run the scripted driver with scripts from this directory (repeatable; default: none)", (v: string, p: string[] = []) => [...p, v])
    .option("--max-sessions <n>", "sessions this server runs at once (default: the number of CPUs)")
    .action((opts: McpOpts, cmd: Command) =>
      guarded(cmd, io, async () => {
        const { serveMcpStdio } = await import("../serve/mcp-stdio.js");
        return serveMcpStdio(opts, io);
      }),
    );
}

/**
 * An in-place session on a repository another session works in is refused before it is recorded
 * (a usage error naming --repo), not left pending behind a runner that cannot take the lock.
 */
async function inPlaceFree(draft: { repo_path: string; worktree_path?: string | null; id: string }): Promise<void> {
  if (draft.worktree_path) return;
  try {
    (await lockWorktree(draft.repo_path, draft.repo_path, `pulse session ${draft.id}`)).release();
  } catch (e) {
    if (e instanceof WorktreeError && e.code === "LOCKED") throw new SessionInputError("repo", `another session works in ${draft.repo_path} in place: ${e.message}`);
    throw e;
  }
}
