/**
 * What `pulse studio` and `pulse run --studio` share: the store's sessions as coding runs
 * (steered through a SessionApi, as `pulse serve` steers them) and the studio's listener over a
 * host whose loops are loaded.
 */
import { buildGraph } from "../diagram/build.js";
import { renderDiagram } from "../diagram/render.js";
import { inlineSvg } from "../diagram/svg.js";
import { SessionApi } from "../serve/session-api.js";
import { SessionInputError } from "../coding/session/service.js";
import type { Host } from "../host/host.js";
import { spellStoreSpec, type Store } from "../store/contracts.js";
import { Studio } from "../studio/studio.js";
import type { AgentStudio } from "../studio/agent/service.js";
import type { Feed } from "../studio/feed.js";
import { StudioServer } from "../studio/server.js";
import { Runs, SessionRuns } from "../studio/runs.js";
import { RecordRuns } from "../studio/record-runs.js";
import { openRunRecords } from "./runs-command.js";
import type { ManifestSource } from "../source/load.js";
import { UsageError } from "./exit-codes.js";
import type { CliIO } from "./io.js";
import { openSessions } from "./session-setup.js";

export interface SessionRunsHandle {
  runs: Runs;
  /** Pauses the sessions this process runs (a turn still going after 10 s is stopped), then closes the records. */
  close(): Promise<void>;
}

export async function openSessionRuns(store: string | undefined, profile: string | undefined, io: CliIO, command: string): Promise<SessionRunsHandle> {
  const sessions = await openSessions({ ...(store !== undefined ? { store } : {}), ...(profile !== undefined ? { profile } : {}) }, io);
  try {
    const { runner, notifier } = await sessions.runner({ io }).catch((e: unknown) => {
      throw e instanceof SessionInputError ? new UsageError(e.message) : e;
    });
    const api = new SessionApi(sessions.service, runner, { notify: { allowFromRequests: [], channelsOf: () => [], notifier }, onError: (id, e) => io.stderr(`${command}: session ${id}: ${e.message}\n`) });
    // Workflows and agent runs of the same store, through the common run view (read-only here).
    const views = await openRunRecords(store, io).catch((e: unknown) => {
      if (!(e instanceof UsageError)) throw e;
      io.stderr(`${command}: coding runs are sessions only: ${e.message}\n`);
      return undefined;
    });
    let closing: Promise<void> | undefined;
    return {
      runs: new Runs([new SessionRuns(api), ...(views ? [new RecordRuns("workflow", views), new RecordRuns("agent", views)] : [])]),
      close: () =>
        (closing ??= (async () => {
          await api.interruptAll(`interrupted by a signal to ${command} (process ${process.pid})`, 10_000);
          await api.settled();
          await notifier.flush();
          await views?.close();
          await sessions.close();
        })()),
    };
  } catch (e) {
    await sessions.close();
    throw e;
  }
}

export interface StudioListen {
  port: number;
  host: string;
  token?: string;
  allowHosts?: readonly string[];
  allowOrigins?: readonly string[];
  /** The flag a listening error names (--port, --studio). */
  flag: string;
  agent?: { get(): AgentStudio; feed: Feed };
}

/** The studio over a host with its loops loaded: listening, its address as a browser opens it. */
export async function serveStudio(host: Host, store: Store, sources: readonly ManifestSource[], runs: Runs, listen: StudioListen): Promise<{ studio: Studio; server: StudioServer; url: string }> {
  const svg = sources.length === 0 ? "" : inlineSvg(await renderDiagram(buildGraph(sources.map((s) => ({ file: s.file, manifest: s.value }))), "svg"));
  const studio = new Studio(host, store, svg, listen.agent ? { feed: listen.agent.feed } : {});
  for (const s of sources) {
    const id = (s.value as { loop_id?: unknown } | null)?.loop_id;
    if (typeof id === "string") studio.nameFile(id, s.file);
  }
  const server = new StudioServer(studio, runs, { ...(listen.token !== undefined ? { token: listen.token } : {}), allowHosts: listen.allowHosts ?? [], allowOrigins: listen.allowOrigins ?? [], ...(listen.agent ? { agent: listen.agent } : {}) });
  const url = await server.listen(listen.port, listen.host).catch((e: NodeJS.ErrnoException) => {
    studio.close();
    throw new UsageError(e.code === "EADDRINUSE" ? `${listen.flag} ${listen.port}: the port is already in use on ${listen.host} (0 takes a free one)` : e.code === "EADDRNOTAVAIL" ? `--host ${listen.host}: not an address of this machine` : `cannot listen on ${listen.host}:${listen.port}: ${e.code ?? e.message}`);
  });
  const shown = listen.host === "0.0.0.0" || listen.host === "::" ? url.replace(/\/\/[^/]+:/, "//127.0.0.1:") : url;
  return { studio, server, url: `${shown}/${listen.token !== undefined ? `#token=${encodeURIComponent(listen.token)}` : ""}` };
}

/** `pulse run --studio [port]`: the studio on 127.0.0.1 over the run's host and store, and the store's sessions. */
export async function startRunStudio(host: Host, store: Store, sources: readonly ManifestSource[], port: string | true, storeFlag: string | undefined, token: string | undefined, io: CliIO, current: (studio: Studio) => void): Promise<{ url: string; close(): Promise<void> }> {
  const p = port === true ? 7400 : /^\d{1,5}$/.test(port) && Number(port) <= 65535 ? Number(port) : undefined;
  if (p === undefined) throw new UsageError(`--studio takes a port from 0 to 65535 (0: any free port), not ${JSON.stringify(port)}`);
  const sessions = await openSessionRuns(studioStoreSpec(storeFlag ?? (io.env.PULSE_STORE || undefined)), undefined, io, "pulse run");
  try {
    const served = await serveStudio(host, store, sources, sessions.runs, { port: p, host: "127.0.0.1", ...(token !== undefined ? { token } : {}), flag: "--studio" });
    current(served.studio);
    return {
      url: served.url,
      close: async () => {
        await served.server.close();
        served.studio.close();
        await sessions.close();
      },
    };
  } catch (e) {
    await sessions.close();
    throw e;
  }
}

/** One spelling for both readers: the host's store wants sqlite:PATH, the session records take either. */
export function studioStoreSpec(given: string | undefined): string | undefined {
  return given === undefined ? given : spellStoreSpec(given);
}
