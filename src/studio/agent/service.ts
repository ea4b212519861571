/**
 * Seed 002's Studio over `createAgent`: threads (each with its own agent, its working directory
 * and actions fixed once a task starts), requests with attached files, the runs' progress on the
 * live feed, confirmations and questions answered from the page, and the managers and settings
 * of the agent's home. Threads are kept in the home (`saves/`), runs in its reports (`logs/`):
 * both come back on reload and after a restart.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { mkdirSync, readFileSync, realpathSync, statSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { createAgent, AgentError, reportPath, type Agent } from "../../coding/agent/api.js";
import { ConfigError, homePaths, loadConfig } from "../../coding/agent/config.js";
import { discoverActions } from "../../coding/agent/actions/discover.js";
import { readReport } from "../../coding/agent/report.js";
import type { Envelope } from "../../coding/agent/types.js";
import type { Feed } from "../feed.js";
import { StudioError } from "../studio.js";
import { Resources } from "./resources.js";
import { AllowedRoots } from "./roots.js";
import { describe, runView, touchedFiles, type RunView } from "./run-view.js";
import { Settings } from "./settings.js";
import { ThreadStore, type Mode, type Thread } from "./threads.js";

export const MAX_FILES = 5;
export const MAX_BYTES = 50 * 1024 * 1024;

export interface AgentStudioOptions {
  home: string;
  roots: readonly string[];
  env: Readonly<Record<string, string | undefined>>;
  feed: Feed;
  /** An agent driver instead of the home's llm entries (`scripted` with `script`). */
  driver?: string;
  script?: string;
}

interface Pending {
  key: string;
  threadId: string;
  runId: string;
  kind: "confirm" | "question";
  text: string;
  answer: (value: boolean | string | null) => void;
}

const givenText = (v: unknown, what: string, max = 20_000): string => {
  if (typeof v !== "string") throw new StudioError(400, "BAD_REQUEST", `${what} must be a string`);
  if (v.length > max) throw new StudioError(400, "BAD_REQUEST", `${what} is longer than ${max} characters`);
  return v;
};
const modeOf = (v: unknown): Mode | undefined => {
  if (v === undefined) return undefined;
  if (v !== "auto" && v !== "interactive") throw new StudioError(400, "BAD_REQUEST", `mode is auto or interactive, not ${JSON.stringify(v)}`);
  return v;
};

export class AgentStudio {
  readonly home: string;
  readonly roots: AllowedRoots;
  readonly threads: ThreadStore;
  readonly resources: Resources;
  readonly settings: Settings;
  private readonly agents = new Map<string, Promise<Agent>>();
  private readonly live = new Map<string, { threadId: string; events: Envelope[]; finished: Promise<unknown>; agent: Agent }>();
  private readonly pending = new Map<string, Pending>();

  constructor(private readonly o: AgentStudioOptions) {
    mkdirSync(o.home, { recursive: true });
    this.home = realpathSync(o.home);
    this.roots = new AllowedRoots(o.roots);
    this.threads = new ThreadStore(join(this.home, "saves"));
    this.resources = new Resources(this.home);
    this.settings = new Settings(this.home, o.env);
  }

  get feed(): Feed {
    return this.o.feed;
  }

  private actionNames(): { name: string; description: string; tags: string[] }[] {
    return discoverActions(homePaths(this.home).actions).actions.map((a) => ({ name: a.name, description: a.description, tags: a.tags }));
  }

  overview() {
    return {
      home: this.home,
      roots: this.roots.roots,
      limits: { files: MAX_FILES, bytes: MAX_BYTES },
      actions: this.actionNames(),
      threads: this.threads.list().map((t) => ({ id: t.id, title: t.title, workdir: t.workdir, started_at: t.started_at, updated_at: t.updated_at, running: [...this.live.values()].some((r) => r.threadId === t.id) })),
    };
  }

  private checkActions(v: unknown): string[] {
    if (!Array.isArray(v) || v.some((a) => typeof a !== "string")) throw new StudioError(400, "BAD_REQUEST", "actions must be a list of action names");
    const known = new Set(this.actionNames().map((a) => a.name));
    const unknown = (v as string[]).filter((a) => !known.has(a));
    if (unknown.length) throw new StudioError(400, "UNKNOWN_ACTION", `no action ${unknown.join(", ")} in ${homePaths(this.home).actions} (there are ${[...known].join(", ") || "none"})`);
    return [...new Set(v as string[])];
  }

  private checkWorkdir(v: unknown): string {
    const dir = this.roots.check(v, "workdir");
    let st;
    try {
      st = statSync(dir);
    } catch {
      throw new StudioError(400, "BAD_PATH", `workdir ${dir} does not exist`);
    }
    if (!st.isDirectory()) throw new StudioError(400, "BAD_PATH", `workdir ${dir} is not a directory`);
    return dir;
  }

  createThread(body: Record<string, unknown>): Thread {
    const workdir = this.checkWorkdir(body.workdir ?? this.roots.roots[0]);
    const actions = body.actions === undefined ? this.actionNames().map((a) => a.name) : this.checkActions(body.actions);
    const title = body.title === undefined ? `Thread ${new Date().toISOString().slice(0, 16).replace("T", " ")}` : givenText(body.title, "title", 200);
    return this.threads.create({ title, workdir, actions, mode: modeOf(body.mode) ?? "auto" });
  }

  updateThread(id: string, body: Record<string, unknown>): Thread {
    const thread = this.threads.get(id);
    const fixed = ["workdir", "actions"].filter((k) => body[k] !== undefined);
    if (thread.started_at && fixed.length) throw new StudioError(409, "FIXED", `the thread's ${fixed.join(" and ")} ${fixed.length > 1 ? "are" : "is"} fixed once a task started (${thread.started_at}): start a new thread to change ${fixed.length > 1 ? "them" : "it"}`);
    const workdir = body.workdir !== undefined ? this.checkWorkdir(body.workdir) : undefined;
    const actions = body.actions !== undefined ? this.checkActions(body.actions) : undefined;
    const title = body.title !== undefined ? givenText(body.title, "title", 200) : undefined;
    const mode = modeOf(body.mode);
    this.dropAgent(id);
    return this.threads.update(id, (t) => {
      if (workdir) t.workdir = workdir;
      if (actions) t.actions = actions;
      if (title) t.title = title;
      if (mode) t.mode = mode;
    });
  }

  deleteThread(id: string): void {
    if (this.runningIn(id)) throw new StudioError(409, "RUNNING", "the thread has a run going: stop it first");
    this.dropAgent(id);
    this.threads.remove(id);
  }

  private runningIn(threadId: string): string | undefined {
    for (const [runId, r] of this.live) if (r.threadId === threadId) return runId;
    return undefined;
  }

  private dropAgent(threadId: string): void {
    const a = this.agents.get(threadId);
    if (!a || this.runningIn(threadId)) return;
    this.agents.delete(threadId);
    void a.then((x) => x.close()).catch(() => undefined);
  }

  /** The settings changed: agents made from the old ones are made again at their next request. */
  settingsChanged(): void {
    for (const id of [...this.agents.keys()]) this.dropAgent(id);
  }

  private agentOf(thread: Thread): Promise<Agent> {
    let a = this.agents.get(thread.id);
    if (!a) {
      a = createAgent({ home: this.home, workdir: thread.workdir, env: this.o.env, actions: thread.actions, ...(this.o.driver ? { driver: this.o.driver } : {}), ...(this.o.script ? { script: this.o.script } : {}), onNote: (m) => this.o.feed.publish("agent", { thread: thread.id, text: m }) });
      this.agents.set(thread.id, a);
      a.catch(() => this.agents.delete(thread.id));
    }
    return a;
  }

  /** A file the page attached, written into the thread's folder (base64 in JSON: the listener takes JSON only). */
  upload(id: string, body: Record<string, unknown>): { path: string; name: string; size: number } {
    this.threads.get(id);
    const name = basename(givenText(body.name, "name", 255)).replace(/[^A-Za-z0-9._-]/g, "_").replace(/^\.+/, "_") || "file";
    const data = Buffer.from(givenText(body.data, "data", Math.ceil((MAX_BYTES * 4) / 3) + 4), "base64");
    if (data.length > MAX_BYTES) throw new StudioError(413, "TOO_LARGE", `a file may be at most ${MAX_BYTES / 1024 / 1024} MB`);
    const dir = join(this.threads.folder(id), "uploads");
    mkdirSync(dir, { recursive: true });
    const path = join(dir, `${randomBytes(4).toString("hex")}-${name}`);
    writeFileSync(path, data);
    return { path, name, size: data.length };
  }

  private checkFiles(thread: Thread, v: unknown): string[] {
    if (v === undefined) return [];
    if (!Array.isArray(v)) throw new StudioError(400, "BAD_REQUEST", "files must be a list of paths");
    if (v.length > MAX_FILES) throw new StudioError(400, "TOO_MANY_FILES", `at most ${MAX_FILES} files go with a request, not ${v.length}`);
    const uploads = join(this.threads.folder(thread.id), "uploads");
    let total = 0;
    const files = v.map((f, i) => {
      const real = this.roots.check(f, `files[${i}]`, thread.workdir, [uploads]);
      const st = statSync(real, { throwIfNoEntry: false });
      if (!st?.isFile()) throw new StudioError(400, "BAD_PATH", `files[${i}] ${JSON.stringify(f)} is not a file`);
      total += st.size;
      return real;
    });
    if (total > MAX_BYTES) throw new StudioError(413, "TOO_LARGE", `the files of one request may be at most ${MAX_BYTES / 1024 / 1024} MB together, not ${(total / 1024 / 1024).toFixed(1)} MB`);
    return files;
  }

  async ask(id: string, body: Record<string, unknown>): Promise<{ runId: string; thread: Thread }> {
    const thread = this.threads.get(id);
    const text = givenText(body.text, "text").trim();
    if (!text) throw new StudioError(400, "BAD_REQUEST", "the request is empty");
    if (this.runningIn(id)) throw new StudioError(409, "RUNNING", "the thread's last task is still running: wait for it or stop it");
    const files = this.checkFiles(thread, body.files);
    const mode = modeOf(body.mode) ?? thread.mode;
    let agent: Agent;
    let handle;
    const events: Envelope[] = [];
    const runId = randomUUID();
    try {
      agent = await this.agentOf(thread);
      handle = await agent.ask(text, files, {
        runId,
        executionMode: mode,
        onEvent: (e) => {
          events.push(e);
          this.o.feed.publish("agent", { thread: id, runId, type: e.type, text: describe(e), ts: e.ts });
        },
        confirm: (action, args, why) => this.waitFor(id, runId, "confirm", `Run ${action.name} ${JSON.stringify(args)}? (${why})`).then((v) => v === true),
        askUser: (question) => this.waitFor(id, runId, "question", question).then((v) => (typeof v === "string" ? v : null)),
      });
    } catch (e) {
      if (e instanceof ConfigError || e instanceof AgentError) throw new StudioError(422, "AGENT_REFUSED", e.message);
      throw e;
    }
    this.live.set(runId, { threadId: id, events, finished: handle.finished, agent });
    const now = new Date().toISOString();
    const saved = this.threads.update(id, (t) => {
      t.started_at ??= now;
      t.messages.push({ role: "user", text, ts: now, runId, ...(files.length ? { files } : {}) });
    });
    void handle.finished
      .then(
        (o) => ({ status: o.status, text: `${o.status} (${o.reason})${o.message ? `: ${o.message}` : ""}${o.summary.actions.length ? ` · ${o.summary.actions.length} action(s)` : ""}` }),
        (e: Error) => ({ status: "failed", text: `failed: ${e.message}` }),
      )
      .then((end) => {
        this.live.delete(runId);
        for (const [k, p] of this.pending) if (p.runId === runId) (this.pending.delete(k), p.answer(null));
        this.threads.update(id, (t) => t.messages.push({ role: "agent", text: `Run ${end.text}`, ts: new Date().toISOString(), runId, status: end.status }));
        this.o.feed.publish("agent", { thread: id, runId, type: "thread", text: `run ${runId.slice(0, 8)} ${end.text}` });
      });
    return { runId, thread: saved };
  }

  /** A confirmation or a question for whoever has the page open; no answer in time is a no. */
  private waitFor(threadId: string, runId: string, kind: Pending["kind"], text: string): Promise<boolean | string | null> {
    const key = randomBytes(8).toString("hex");
    const seconds = loadConfig(this.home).execution.confirm_timeout_sec;
    return new Promise((resolve) => {
      const timer = setTimeout(() => (this.pending.delete(key), resolve(null)), seconds * 1000);
      timer.unref();
      this.pending.set(key, { key, threadId, runId, kind, text, answer: (v) => (clearTimeout(timer), resolve(v)) });
      this.o.feed.publish("agent", { thread: threadId, runId, type: kind, key, text });
    });
  }

  answer(id: string, body: Record<string, unknown>): { answered: boolean } {
    const p = this.pending.get(String(body.key));
    if (!p || p.threadId !== id) throw new StudioError(404, "NOT_FOUND", "no such question waits (answered, timed out, or its run ended)");
    if (p.kind === "confirm" && typeof body.yes !== "boolean") throw new StudioError(400, "BAD_REQUEST", "a confirmation is answered {key, yes: true|false}");
    const value = p.kind === "confirm" ? (body.yes as boolean) : givenText(body.text, "text", 4000);
    this.pending.delete(p.key);
    p.answer(value);
    return { answered: true };
  }

  abort(id: string, body: Record<string, unknown>): { aborted: boolean } {
    const runId = this.runningIn(id);
    if (!runId || (body.runId !== undefined && body.runId !== runId)) throw new StudioError(409, "NOT_RUNNING", "the thread has no run going");
    const r = this.live.get(runId)!;
    return { aborted: r.agent.abort(runId) };
  }

  async feedback(id: string, body: Record<string, unknown>): Promise<unknown> {
    const agent = await this.agentOf(this.threads.get(id));
    const { actionRunId, ...rest } = body;
    try {
      return await agent.submitFeedback(givenText(actionRunId, "actionRunId", 64), { submittedBy: "user", ts: new Date().toISOString(), ...rest });
    } catch (e) {
      throw new StudioError(400, "BAD_FEEDBACK", (e as Error).message);
    }
  }

  private run(runId: string, workdir: string): RunView & { files: ReturnType<typeof touchedFiles> } {
    const live = this.live.get(runId);
    let events: readonly Envelope[] = live?.events ?? [];
    if (!live) {
      try {
        events = readReport(reportPath(this.home, runId));
      } catch {
        return { ...runView(runId, [], false), status: "pruned", message: "its report is gone (logging.keep_last_runs keeps the latest)", files: [] };
      }
    }
    const view = runView(runId, events, live !== undefined);
    const from = view.started_at ? Date.parse(view.started_at) : Date.now();
    const to = view.finished_at ? Date.parse(view.finished_at) + 1000 : Date.now() + 1000;
    return { ...view, files: touchedFiles(workdir, from - 1000, to) };
  }

  threadView(id: string) {
    const thread = this.threads.get(id);
    const runIds = [...new Set(thread.messages.flatMap((m) => (m.runId ? [m.runId] : [])))];
    const runs = runIds.slice(-20).map((r) => this.run(r, thread.workdir));
    const pending = [...this.pending.values()].filter((p) => p.threadId === id).map(({ answer: _a, ...p }) => p);
    return { thread, runs, pending, running: this.runningIn(id) ?? null };
  }

  /** A text file under the roots (or the home's runs), its first 64 KiB: what a run wrote, shown on the page. */
  preview(path: string | null): { path: string; size: number; text: string; truncated: boolean } {
    const real = this.roots.check(path ?? "", "path", undefined, [join(this.home, "saves")]);
    const st = statSync(real, { throwIfNoEntry: false });
    if (!st?.isFile()) throw new StudioError(404, "NOT_FOUND", `${real} is not a file`);
    const buf = readFileSync(real).subarray(0, 65_536);
    return { path: real, size: st.size, text: buf.toString("utf8"), truncated: st.size > buf.length };
  }

  /** Stops the runs going here (their reports end `aborted`) and closes the agents. */
  async close(): Promise<void> {
    for (const [runId, r] of this.live) r.agent.abort(runId);
    await Promise.race([Promise.allSettled([...this.live.values()].map((r) => r.finished)), new Promise((r) => setTimeout(r, 10_000).unref())]);
    await new Promise((r) => setTimeout(r, 20));
    for (const a of this.agents.values()) await a.then((x) => x.close()).catch(() => undefined);
    this.agents.clear();
  }
}
