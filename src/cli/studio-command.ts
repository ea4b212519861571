/**
 * `pulse studio`: hosts the given loops as `pulse run` does (recording handlers, the store's
 * state, a kickoff iteration each) and serves the studio's page and API over them and over the
 * store's coding runs (sessions, through the same SessionApi as `pulse serve`).
 */
import { randomBytes } from "node:crypto";
import { DEFAULT_MAX_BYTES } from "../source/load.js";
import { validateSources } from "../validator/validate.js";
import { compactLine } from "../format/compact.js";
import { buildGraph } from "../diagram/build.js";
import { renderDiagram } from "../diagram/render.js";
import { inlineSvg } from "../diagram/svg.js";
import { SessionApi } from "../serve/session-api.js";
import { SessionInputError } from "../coding/session/service.js";
import { Studio } from "../studio/studio.js";
import { StudioServer } from "../studio/server.js";
import { Runs, SessionRuns } from "../studio/runs.js";
import { EXIT, UsageError } from "./exit-codes.js";
import type { CliIO } from "./io.js";
import { readManifestSources } from "./inputs.js";
import { DEFAULT_STORE, openStoreForCli } from "./store-open.js";
import { openSessions } from "./session-setup.js";
import { parseListenHost, parsePort, type StudioCliOptions } from "./studio-options.js";

export async function runStudio(operands: readonly string[], opts: StudioCliOptions, io: CliIO, signals: { onStop: (stop: () => void) => void }): Promise<number> {
  const port = parsePort(opts.port);
  const listen = parseListenHost(opts.host);
  let token = opts.token ?? (io.env.PULSE_TOKEN || undefined);
  if (token !== undefined && token.length < 16) throw new UsageError("--token (or PULSE_TOKEN) must be at least 16 characters, e.g. $(openssl rand -hex 32)");
  const madeUp = token === undefined && !listen.loopback;
  if (madeUp) token = randomBytes(24).toString("hex");

  const sources = operands.length === 0 ? [] : await readManifestSources(operands, undefined, io, DEFAULT_MAX_BYTES);
  const results = validateSources(sources);
  const errors = results.flatMap((r) => r.diagnostics.filter((d) => d.severity === "error").map((d) => compactLine(r.file, d)));
  if (errors.length > 0) {
    io.stderr(`${errors.join("\n")}\npulse studio: ${errors.length} error${errors.length === 1 ? "" : "s"}; fix the manifests (pulse validate shows the details)\n`);
    return EXIT.problems;
  }

  // One spelling for both readers: the host's store wants sqlite:PATH, the session records take either.
  const given = opts.store ?? (io.env.PULSE_STORE || undefined);
  const chosen = given === undefined || /^(sqlite:|memory:|postgres(ql)?:\/\/)/.test(given) ? given : `sqlite:${given}`;
  const store = await openStoreForCli(chosen ?? DEFAULT_STORE, io, "pulse studio", { memoryWithoutDriver: chosen === undefined, flag: opts.store !== undefined ? "--store" : "PULSE_STORE" });
  if (!store) return EXIT.problems;
  const sessions = await openSessions({ ...(chosen !== undefined ? { store: chosen } : {}), ...(opts.profile !== undefined ? { profile: opts.profile } : {}) }, io).catch(async (e: unknown) => {
    await store.close();
    throw e;
  });
  const closeAll = async () => {
    await sessions.close();
    await store.close();
  };
  try {
    const { runner, notifier } = await sessions.runner({ io }).catch((e: unknown) => {
      throw e instanceof SessionInputError ? new UsageError(e.message) : e;
    });
    const api = new SessionApi(sessions.service, runner, { notify: { allowFromRequests: [], channelsOf: () => [], notifier }, onError: (id, e) => io.stderr(`pulse studio: session ${id}: ${e.message}\n`) });

    const { createHost, recordingHandler } = await import("../host/index.js");
    let studio: Studio | undefined;
    const recording = recordingHandler({ emits: (loopId, phaseId) => (host.loop(loopId)?.compiled.connections ?? []).filter((c) => c.connection.emit_phase === phaseId).map((c) => c.connection.token as never) });
    const host = await createHost({ workspace: opts.workspace ?? "default", store, defaultHandler: (ctx) => (studio ? studio.capturing(recording)(ctx) : recording(ctx)), onEscalation: () => undefined });
    const graph = buildGraph(sources.map((s) => ({ file: s.file, manifest: s.value })));
    const svg = sources.length === 0 ? "" : inlineSvg(await renderDiagram(graph, "svg"));
    studio = new Studio(host, store, svg);
    for (const source of sources) {
      try {
        const loop = await host.load(source.value as Record<string, unknown>, { name: source.file });
        studio.nameFile(loop.id, source.file);
      } catch (error) {
        io.stderr(`pulse studio: ${source.file}: ${(error as Error).message}\n`);
        await host.stop({ timeoutMs: 0 });
        return EXIT.problems;
      }
    }
    const server = new StudioServer(studio, new Runs([new SessionRuns(api)]), { ...(token !== undefined ? { token } : {}), allowHosts: opts.allowHost ?? [], allowOrigins: opts.allowOrigin ?? [] });
    const url = await server.listen(port, listen.host).catch((e: NodeJS.ErrnoException) => {
      throw new UsageError(e.code === "EADDRINUSE" ? `--port ${port}: the port is already in use on ${listen.host} (--port 0 takes a free one)` : e.code === "EADDRNOTAVAIL" ? `--host ${listen.host}: not an address of this machine` : `cannot listen on ${listen.host}:${port}: ${e.code ?? e.message}`);
    });
    const shownUrl = listen.host === "0.0.0.0" || listen.host === "::" ? url.replace(/\/\/[^/]+:/, "//127.0.0.1:") : url;
    io.stdout(`pulse studio at ${shownUrl}/${token !== undefined ? `#token=${encodeURIComponent(token)}` : ""} (${host.loops.length} loop${host.loops.length === 1 ? "" : "s"}; ${token !== undefined ? `bearer token ${madeUp ? "made up for this run" : "required"}: ${token}; ` : ""}Ctrl-C stops)\n`);

    host.start();
    if (opts.kickoff !== false) for (const loop of host.loops) void host.trigger(loop.id, { cause: { trigger: "kickoff" } }).catch((e: Error) => io.stderr(`pulse studio: ${loop.id}: ${e.message}\n`));
    const keepAlive = setInterval(() => undefined, 1 << 30);
    await new Promise<void>((resolve) => signals.onStop(resolve));
    clearInterval(keepAlive);
    io.stdout("stopping: in-flight iterations finish; sessions running here pause\n");
    await server.close();
    await api.interruptAll(`interrupted by a signal to pulse studio (process ${process.pid})`, 10_000);
    await api.settled();
    await host.stop({ timeoutMs: 10_000 });
    studio.close();
    return EXIT.ok;
  } finally {
    await closeAll();
  }
}
