/**
 * Where the session loop is assembled for the CLI and `pulse serve`: the records (SQLite in the
 * shared `.pulse/pulse.db`, or memory), the profile, the runtime with the embedded defaults, the
 * agent driver a session names, and the notifier's channels.
 */
import { runChecks } from "../../adapters/agents/cli/checks.js";
import { dirname, resolve } from "node:path";
import { createDriver } from "../../adapters/agents/create-driver.js";
import { MemorySessionRecords } from "../../adapters/memory/session-records.js";
import { SqliteSessionRecords } from "../../adapters/sqlite/session-records.js";
import { MemoryAgentProcesses } from "../../adapters/memory/agent-processes.js";
import { SqliteAgentProcesses } from "../../adapters/sqlite/agent-processes.js";
import { ProcessReaper } from "../../adapters/agents/cli/reaper.js";
import type { AgentProcesses } from "../coding/agent-processes.js";
import type { Reaper } from "../coding/reaper.js";
import { desktopChannel, Notifier, terminalChannel, webhookChannel, type NotifierChannel } from "../coding/notifier.js";
import { loadSessionProfile, type SessionProfile } from "../coding/session/profile.js";
import type { SessionRecord, SessionRecords } from "../coding/session/records.js";
import { SessionRunner } from "../coding/session/runner.js";
import { SessionInputError, SessionService, type SessionDraft } from "../coding/session/service.js";
import { worktreesDir } from "../coding/session/workspace.js";
import { createRuntime } from "../embedded.js";
import type { CliIO } from "./io.js";

export interface SessionStoreOptions {
  store?: string;
  profile?: string;
}

export interface Sessions {
  records: SessionRecords;
  service: SessionService;
  profile: SessionProfile;
  /** The agent processes sessions have running, and what stops those a dead runner left. */
  processes: AgentProcesses;
  reaper: Reaper;
  /** The file the records are in (undefined for memory). */
  storePath?: string;
  runner(options?: { notify?: string[]; terminal?: boolean; io?: CliIO }): Promise<{ runner: SessionRunner; notifier: Notifier }>;
  close(): Promise<void>;
}

export { STORE_HELP } from "./serve-options.js";

export function storePathOf(store: string | undefined, io: Pick<CliIO, "env" | "cwd">): string | undefined {
  const given = store ?? (io.env.PULSE_STORE || ".pulse/pulse.db");
  if (given === "memory:") return undefined;
  return resolve(io.cwd, given.replace(/^sqlite:/, ""));
}

export function openSessions(options: SessionStoreOptions, io: Pick<CliIO, "env" | "cwd" | "stderr">): Sessions {
  const profile = loadSessionProfile(options.profile === undefined ? undefined : resolve(io.cwd, options.profile));
  const storePath = storePathOf(options.store, io);
  const records: SessionRecords = storePath === undefined ? new MemorySessionRecords() : SqliteSessionRecords.open(storePath);
  let processes: AgentProcesses;
  try {
    processes = storePath === undefined ? new MemoryAgentProcesses() : SqliteAgentProcesses.open(storePath);
  } catch (e) {
    void records.close();
    throw e;
  }
  const reaper = new ProcessReaper(processes);
  const service = new SessionService(records, { driver: profile.dispatch.driver, contextStrategy: profile.buildContext.contextStrategy, maxIterations: profile.limits.maxIterations ?? 10, verify: { checks: profile.verify.checks, each: profile.verify.each }, worktreesDir: worktreesDir(io.env), ...(storePath ? { stateDir: dirname(storePath) } : {}) }, (draft) => checkSession(draft, profile, storePath, io), reaper);
  return {
    records,
    service,
    profile,
    processes,
    reaper,
    ...(storePath ? { storePath } : {}),
    runner: async (o = {}) => {
      const channels: NotifierChannel[] = [];
      if (o.terminal !== false && profile.notify.terminal) channels.push(terminalChannel((line) => (o.io ?? io).stderr(line)));
      if (profile.notify.desktop) channels.push(desktopChannel());
      for (const url of [...profile.notify.webhooks, ...(o.notify ?? [])]) channels.push(webhookChannel(url));
      const notifier = new Notifier(channels, { onError: (channel, e) => io.stderr(`pulse session: notification through ${channel} failed: ${e.message}\n`) });
      const runner = await SessionRunner.create({
        runtime: await createRuntime(),
        records,
        profile,
        notifier,
        processes,
        reaper,
        checks: (commands, o) => runChecks(commands, { ...o, parentEnv: io.env }),
        driverFor: (s) => driverFor(s, profile, storePath, io, true),
        ...(storePath ? { stateDir: dirname(storePath) } : {}),
      });
      return { runner, notifier };
    },
    close: async () => {
      await processes.close();
      await records.close();
    },
  };
}

/**
 * What would stop a session before its first iteration, found before it is recorded (and before
 * a client is told it started): a driver that cannot be built (unknown,
 * no endpoint), a script that is not one.
 */
async function checkSession(draft: SessionDraft, profile: SessionProfile, storePath: string | undefined, io: Pick<CliIO, "env" | "stderr">): Promise<void> {
  try {
    driverFor({ ...draft, context_strategy: "none" } as SessionRecord, profile, storePath, io, false);
  } catch (e) {
    throw new SessionInputError(draft.driver.name === "scripted" ? "script" : "driver", (e as Error).message);
  }
}

/**
 * The session's driver. With the mcp and hybrid context strategies a CLI agent is handed the
 * profile's MCP servers, by default pulse's own session server: read-only, and limited to this session
 * (its history: pulse_status). An agent must never steer, or even see, the other sessions.
 */
function driverFor(s: SessionRecord, profile: SessionProfile, storePath: string | undefined, io: Pick<CliIO, "env" | "stderr">, warn: boolean) {
  const wantsMcp = s.context_strategy === "mcp" || s.context_strategy === "hybrid";
  if (warn && wantsMcp && (s.driver.name === "scripted" || s.driver.name === "openai")) {
    io.stderr(`pulse session: the ${s.driver.name} driver takes no MCP servers: with the ${s.context_strategy} context strategy it gets ${s.context_strategy === "hybrid" ? "the prefetched context only" : "no context beyond the goal"}\n`);
  }
  // pulse's own server goes to every CLI agent that takes MCP: its pulse_signal is the completion
  // tool; its history (pulse_status) only with the mcp and hybrid strategies.
  const own = storePath && process.argv[1] ? { pulse: { command: process.execPath, args: [process.argv[1], "session", "mcp", "--store", storePath, "--session", s.id, ...(wantsMcp ? [] : ["--no-history"])] } } : undefined;
  const servers = wantsMcp ? { ...own, ...profile.buildContext.mcpServers } : own;
  return createDriver({ name: s.driver.name, ...(s.driver.script ? { script: s.driver.script } : {}), env: io.env, ...(servers && Object.keys(servers).length > 0 ? { cli: { mcpServers: servers } } : {}) });
}
