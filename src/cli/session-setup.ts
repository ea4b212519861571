/**
 * Where the session loop is assembled for the CLI and `pulse serve`: the records (SQLite in the
 * shared `.pulse/pulse.db`, the PostgreSQL store's schema, or memory), the profile, the runtime with the embedded defaults, the
 * agent driver a session names, and the notifier's channels.
 */
import { dirname, resolve } from "node:path";
import { MemorySessionRecords } from "../../adapters/memory/session-records.js";
import { SqliteSessionRecords } from "../../adapters/sqlite/session-records.js";
import { MemoryAgentProcesses } from "../../adapters/memory/agent-processes.js";
import { SqliteAgentProcesses } from "../../adapters/sqlite/agent-processes.js";
import { ProcessReaper } from "../../adapters/agents/cli/reaper.js";
import type { AgentProcesses } from "../coding/agent-processes.js";
import type { Reaper } from "../coding/reaper.js";
import { desktopChannel, Notifier, terminalChannel, webhookChannel, type NotifierChannel } from "../coding/notifier.js";
import { ChannelSpecError, channelOf } from "../coding/notify/channels.js";
import { loadSessionProfile, type SessionProfile } from "../coding/session/profile.js";
import type { SessionRecord, SessionRecords } from "../coding/session/records.js";
import type { SessionRunner } from "../coding/session/runner.js";
import { SessionInputError, SessionService, type SessionDraft } from "../coding/session/service.js";
import { worktreesDir } from "../coding/session/workspace.js";
import type { Store } from "../store/contracts.js";
import { StoreError } from "../store/contracts.js";
import { UsageError } from "./exit-codes.js";
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
  /** The SQLite file the records are in (undefined for memory and PostgreSQL). */
  storePath?: string;
  /** What another pulse process is given as --store to reach these records (undefined for memory). */
  storeArg?: string;
  /** pulse's state directory (detached sessions' logs): beside the SQLite file, else .pulse of the working directory. */
  stateDir?: string;
  runner(options?: { notify?: string[]; terminal?: boolean; io?: CliIO }): Promise<{ runner: SessionRunner; notifier: Notifier }>;
  /**
   * The channels of these texts (`--notify` values, a request's `notify`) and of the profile,
   * built with this process's environment: a SessionInputError naming `field` and the text
   * when one is malformed or lacks its secret. Called before a session is recorded.
   */
  notifyChannels(specs: readonly string[], field?: string, withProfile?: boolean): NotifierChannel[];
  close(): Promise<void>;
}

export { STORE_HELP } from "./serve-options.js";

// Loaded when a session is started or run, never by `pulse session list` and the other readers:
// the agent drivers (and the yaml parser their presets file needs), the runtime, the session runner.
const agents = () => import("../../adapters/agents/create-driver.js");
type Agents = Awaited<ReturnType<typeof agents>>;

/** Where a command's sessions are recorded: --store, else $PULSE_STORE, else .pulse/pulse.db. */
export type SessionStore = { kind: "memory" } | { kind: "sqlite"; path: string } | { kind: "postgres"; url: string; flag: string };

export function sessionStoreOf(store: string | undefined, io: Pick<CliIO, "env" | "cwd">): SessionStore {
  const flag = store !== undefined ? "--store" : io.env.PULSE_STORE ? "PULSE_STORE" : "--store";
  const given = store ?? (io.env.PULSE_STORE || ".pulse/pulse.db");
  if (given === "memory:") return { kind: "memory" };
  if (/^postgres(ql)?:\/\//.test(given)) return { kind: "postgres", url: given, flag };
  return { kind: "sqlite", path: resolve(io.cwd, given.replace(/^sqlite:/, "")) };
}

/** The SQLite file a command's sessions are in (undefined for memory: and postgres://). */
export function storePathOf(store: string | undefined, io: Pick<CliIO, "env" | "cwd">): string | undefined {
  const s = sessionStoreOf(store, io);
  return s.kind === "sqlite" ? s.path : undefined;
}

async function openRecords(spec: SessionStore, io: Pick<CliIO, "stderr">): Promise<{ records: SessionRecords; processes: AgentProcesses }> {
  if (spec.kind === "memory") return { records: new MemorySessionRecords(), processes: new MemoryAgentProcesses() };
  if (spec.kind === "sqlite") {
    const records = SqliteSessionRecords.open(spec.path);
    try {
      return { records, processes: SqliteAgentProcesses.open(spec.path) };
    } catch (e) {
      void records.close();
      throw e;
    }
  }
  // Loaded only for a PostgreSQL store: the SQLite default does not pay for pg.
  const { PostgresSessionRecords } = await import("../../adapters/postgres/session-records.js");
  try {
    const records = await PostgresSessionRecords.open(spec.url, { onNote: (m) => io.stderr(`pulse: ${m}\n`) });
    return { records, processes: records.agentProcesses() };
  } catch (error) {
    // As for every PostgreSQL store given at start: unreachable or not migrated is a usage error (exit 2).
    if (error instanceof StoreError) throw new UsageError(`${spec.flag}: ${error.message}`);
    throw error;
  }
}

export async function openSessions(options: SessionStoreOptions, io: Pick<CliIO, "env" | "cwd" | "stderr">): Promise<Sessions> {
  const profile = loadSessionProfile(options.profile === undefined ? undefined : resolve(io.cwd, options.profile));
  const spec = sessionStoreOf(options.store, io);
  const storePath = spec.kind === "sqlite" ? spec.path : undefined;
  const storeArg = spec.kind === "sqlite" ? spec.path : spec.kind === "postgres" ? spec.url : undefined;
  const stateDir = spec.kind === "sqlite" ? dirname(spec.path) : spec.kind === "postgres" ? resolve(io.cwd, ".pulse") : undefined;
  const { records, processes } = await openRecords(spec, io);
  const reaper = new ProcessReaper(processes);
  const notifyChannels = (specs: readonly string[], field = "--notify", withProfile = true): NotifierChannel[] => [
    ...(withProfile ? profile.notify.channels : []).map((spec) => built(spec, "notify.channels in the profile")),
    ...specs.map((spec) => built(spec, field)),
  ];
  const built = (spec: string, field: string): NotifierChannel => {
    try {
      return channelOf(spec, io.env, profile.notify);
    } catch (e) {
      if (e instanceof ChannelSpecError) throw new SessionInputError(`${field} ${e.spec}`, e.reason);
      throw e;
    }
  };
  const service = new SessionService(records, { driver: profile.dispatch.driver, contextStrategy: profile.buildContext.contextStrategy, maxIterations: profile.limits.maxIterations ?? 10, verify: { checks: profile.verify.checks, each: profile.verify.each }, worktreesDir: worktreesDir(io.env), ...(stateDir ? { stateDir } : {}) }, (draft) => checkSession(draft, profile, storeArg, io), reaper);
  // The audit trail of the runs: in the store's own tables beside the records (pulse audit reads
  // and verifies it), opened only by a process that runs sessions.
  let auditStore: Promise<Store> | undefined;
  const auditTrail = (): Promise<Store> | undefined => {
    if (spec.kind === "memory") return undefined;
    auditStore ??= import("../embedded.js").then(({ openStore }) => openStore(spec.kind === "sqlite" ? `sqlite:${spec.path}` : spec.url, { note: (m) => io.stderr(`pulse: ${m}\n`) }));
    return auditStore;
  };
  return {
    records,
    service,
    profile,
    processes,
    reaper,
    ...(storePath ? { storePath } : {}),
    ...(storeArg ? { storeArg } : {}),
    ...(stateDir ? { stateDir } : {}),
    notifyChannels,
    runner: async (o = {}) => {
      const channels: NotifierChannel[] = [];
      if (o.terminal !== false && profile.notify.terminal) channels.push(terminalChannel((line) => (o.io ?? io).stderr(line)));
      if (profile.notify.desktop) channels.push(desktopChannel());
      for (const url of profile.notify.webhooks) channels.push(webhookChannel(url));
      channels.push(...notifyChannels(o.notify ?? []));
      const notifier = new Notifier(channels, {
        ...(profile.notify.timeoutMs !== undefined ? { timeoutMs: profile.notify.timeoutMs } : {}),
        ...(profile.notify.retryDelaysMs !== undefined ? { retryDelaysMs: profile.notify.retryDelaysMs } : {}),
        onError: (channel, e) => io.stderr(`pulse session: notification through ${channel} failed: ${e.message}\n`),
      });
      const [{ SessionRunner }, { createRuntime, storeAuditRegistry }, { runChecks }, loaded] = await Promise.all([import("../coding/session/runner.js"), import("../embedded.js"), import("../../adapters/agents/cli/checks.js"), agents()]);
      const runner = await SessionRunner.create({
        // The store journals each iteration (its phases' outputs) and keeps its audit trail: a crashed run's iteration resumes from there.
        runtime: await createRuntime(await auditTrail()?.then((store) => ({ registry: storeAuditRegistry(store), store }))),
        records,
        profile,
        notifier,
        processes,
        reaper,
        checks: (commands, o) => runChecks(commands, { ...o, parentEnv: io.env }),
        driverFor: (s) => driverFor(loaded, s, profile, storeArg, io, true),
        ...(stateDir ? { stateDir } : {}),
      });
      return { runner, notifier };
    },
    close: async () => {
      if (auditStore) await (await auditStore.catch(() => undefined))?.close();
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
async function checkSession(draft: SessionDraft, profile: SessionProfile, storeArg: string | undefined, io: Pick<CliIO, "env" | "stderr">): Promise<void> {
  const [loaded, { AgentsConfigError }, { findOnPath }] = await Promise.all([agents(), import("../../adapters/agents/cli/preset-config.js"), import("../../adapters/agents/cli/probe.js")]);
  try {
    driverFor(loaded, { ...draft, context_strategy: "none" } as SessionRecord, profile, storeArg, io, false);
  } catch (e) {
    // A bad presets file is named by the variable that points at it, not by --driver.
    const field = e instanceof AgentsConfigError ? "PULSE_AGENTS_CONFIG" : draft.driver.name === "scripted" ? "script" : "driver";
    throw new SessionInputError(field, (e as Error).message);
  }
  const missing = missingCli(draft.driver.name, io.env, loaded.availablePresets, findOnPath);
  if (missing) throw new SessionInputError("driver", missing);
}

/** How to install the built-in presets' CLIs, for the refusal of a session whose agent is not installed. */
const INSTALL: Record<string, string> = {
  claude: "npm i -g @anthropic-ai/claude-code",
  codex: "npm i -g @openai/codex",
  gemini: "npm i -g @google/gemini-cli",
  qwen: "npm i -g @qwen-code/qwen-code",
  opencode: "npm i -g opencode-ai",
  goose: "see https://block.github.io/goose/docs/getting-started/installation",
  aider: "python -m pip install aider-install && aider-install",
};

/**
 * A CLI preset whose command is not on PATH: found before the session is recorded, so a missing
 * agent never burns turns on ENOENT (each one "Continuing...", then "no progress").
 */
export function missingCli(driver: string, env: Readonly<Record<string, string | undefined>>, availablePresets: Agents["availablePresets"], findOnPath: (command: string, path: string | undefined) => string | undefined | null): string | undefined {
  if (driver === "scripted" || driver === "openai") return undefined;
  const configured = availablePresets(undefined, env)[driver];
  if (!configured) return undefined;
  const command = configured.preset.command;
  if (findOnPath(command, env.PATH)) return undefined;
  const how = INSTALL[driver];
  return `${command} is not installed (not on PATH): ${how ? `install it (${how})` : "install it"} or choose --driver (pulse drivers lists them)`;
}

/**
 * The session's driver. With the mcp and hybrid context strategies a CLI agent is handed the
 * profile's MCP servers, by default pulse's own session server: read-only, and limited to this session
 * (its history: pulse_status). An agent must never steer, or even see, the other sessions.
 */
function driverFor({ createDriver }: Agents, s: SessionRecord, profile: SessionProfile, storeArg: string | undefined, io: Pick<CliIO, "env" | "stderr">, warn: boolean) {
  const wantsMcp = s.context_strategy === "mcp" || s.context_strategy === "hybrid";
  if (warn && wantsMcp && (s.driver.name === "scripted" || s.driver.name === "openai")) {
    io.stderr(`pulse session: the ${s.driver.name} driver takes no MCP servers: with the ${s.context_strategy} context strategy it gets ${s.context_strategy === "hybrid" ? "the prefetched context only" : "no context beyond the goal"}\n`);
  }
  // pulse's own server goes to every CLI agent that takes MCP: its pulse_signal is the completion
  // tool; its history (pulse_status) only with the mcp and hybrid strategies.
  // storeArg: the SQLite file, or the PostgreSQL URL as given (its password too: prefer PGPASSWORD or ~/.pgpass).
  const own = storeArg && process.argv[1] ? { pulse: { command: process.execPath, args: [process.argv[1], "session", "mcp", "--store", storeArg, "--session", s.id, ...(wantsMcp ? [] : ["--no-history"])] } } : undefined;
  const servers = wantsMcp ? { ...own, ...profile.buildContext.mcpServers } : own;
  // The guidance hooks (pulse guidance hook) go to every CLI agent; one whose CLI has none pulse installs is steered at iteration boundaries only.
  const guidanceHook = process.argv[1] ? { command: process.execPath, args: [process.argv[1], "guidance", "hook"] } : undefined;
  const cli = { ...(servers && Object.keys(servers).length > 0 ? { mcpServers: servers } : {}), ...(guidanceHook ? { guidanceHook } : {}) };
  return createDriver({ name: s.driver.name, ...(s.driver.script ? { script: s.driver.script } : {}), env: io.env, ...(Object.keys(cli).length > 0 ? { cli } : {}) });
}
