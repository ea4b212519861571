/**
 * Record any driver's calls to JSONL and replay them later without the agent: one line per call
 * with the request, its events (with their times) and the result, plus the call's effects on a
 * git workspace (files changed, with their final content, and the commits' messages), which the
 * replay writes back so a loop's evidence is the same. After SWE-agent's ReplayModel and
 * ralph-orchestrator's ReplayBackend.
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { AgentDriver, AgentEvent, AgentRequest, AgentResult, RunOptions } from "../../../src/agents/contract.js";
import { collectEvidence, startEvidence, type EvidenceStart } from "../../../src/coding/evidence.js";
import { commit, git } from "../../../src/coding/git.js";
import { Workspace } from "../http/workspace.js";

export interface RecordedCall {
  v: 1;
  driver: string;
  request: AgentRequest;
  events: { t: number; event: AgentEvent }[];
  result: AgentResult;
  /**
   * What the call did to its git workspace: the files it committed (their content at HEAD; null:
   * deleted) with its commits' subjects, then what it left uncommitted (the working tree's).
   * A replay makes one commit of the first part, with the last subject.
   */
  effects?: { committed: Record<string, string | null>; commits: string[]; uncommitted: Record<string, string | null> };
}

const MAX_EFFECT_FILE = 1 << 20;

/** Wraps a driver: every call is passed through and appended to `file` as one JSON line. */
export function recordingDriver(driver: AgentDriver, file: string): AgentDriver {
  mkdirSync(dirname(file), { recursive: true });
  return {
    name: driver.name,
    capabilities: driver.capabilities,
    async run(request: AgentRequest, options: RunOptions = {}): Promise<AgentResult> {
      const t0 = performance.now();
      const events: RecordedCall["events"] = [];
      const start = await startEvidence(request.cwd).catch(() => undefined);
      const result = await driver.run(request, { ...options, onEvent: (event) => (events.push({ t: Math.round(performance.now() - t0), event }), options.onEvent?.(event)) });
      const record: RecordedCall = { v: 1, driver: driver.name, request, events, result };
      const effects = start ? await effectsOf(request.cwd, start) : undefined;
      if (effects) record.effects = effects;
      appendFileSync(file, JSON.stringify(record) + "\n");
      return result;
    },
  };
}

async function effectsOf(cwd: string, start: EvidenceStart): Promise<RecordedCall["effects"] | undefined> {
  const evidence = await collectEvidence(cwd, start).catch(() => undefined);
  if (!evidence) return undefined;
  const committed: Record<string, string | null> = {};
  for (const path of evidence.filesCommitted) {
    const r = await git(cwd, ["show", `HEAD:${path}`], { allowFail: true });
    committed[path] = r.code === 0 && r.stdout.length <= MAX_EFFECT_FILE ? r.stdout : null;
  }
  const uncommitted: Record<string, string | null> = {};
  for (const path of evidence.filesUncommitted) {
    const abs = join(cwd, path);
    uncommitted[path] = existsSync(abs) && statSync(abs).size <= MAX_EFFECT_FILE ? readFileSync(abs, "utf8") : null;
  }
  return { committed, commits: evidence.commits.map((c) => c.subject).reverse(), uncommitted };
}

export interface ReplayOptions {
  /** `recorded`: events come with their recorded spacing; `instant` (default): at once. */
  timing?: "instant" | "recorded";
  /** Write the recorded effects into the workspace (default true). */
  effects?: boolean;
}

export class ReplayError extends Error {}

/** Replays a recording in order; a call past its end, or for another loop/phase/iteration, is an error result. */
export function replayDriver(file: string, options: ReplayOptions = {}): AgentDriver & { remaining(): number } {
  const lines = readFileSync(file, "utf8").split("\n").filter((l) => l.trim());
  const records = lines.map((line, i) => {
    try {
      const r = JSON.parse(line) as RecordedCall;
      if (r.v !== 1 || !r.result || !Array.isArray(r.events)) throw new Error("not a recorded call");
      return r;
    } catch (e) {
      throw new ReplayError(`${file}:${i + 1}: ${(e as Error).message}`);
    }
  });
  let next = 0;
  const first = records[0];
  return {
    name: first?.driver ?? "replay",
    capabilities: { toolCalls: "native", resume: true, usage: true, costUsd: true, maxTurns: false },
    remaining: () => records.length - next,
    async run(request: AgentRequest, runOptions: RunOptions = {}): Promise<AgentResult> {
      const record = records[next];
      const fail = (message: string): AgentResult => ({ status: "error", text: "", transcript: "", toolCalls: [], durationMs: 0, warnings: [], error: { kind: "process", message } });
      if (!record) return fail(`the recording ${file} has no call left (it holds ${records.length})`);
      for (const key of ["loopId", "phaseId", "iteration"] as const) {
        if (record.request[key] !== undefined && request[key] !== undefined && record.request[key] !== request[key]) {
          return fail(`call ${next + 1} of ${file} was recorded for ${key} ${JSON.stringify(record.request[key])}, not ${JSON.stringify(request[key])}`);
        }
      }
      next++;
      let last = 0;
      for (const { t, event } of record.events) {
        if (options.timing === "recorded" && t > last) await new Promise((r) => setTimeout(r, t - last));
        last = t;
        runOptions.onEvent?.(event);
      }
      if (options.effects !== false && record.effects) await applyEffects(request.cwd, record.effects);
      return structuredClone(record.result);
    },
  };
}

async function applyEffects(cwd: string, effects: NonNullable<RecordedCall["effects"]>): Promise<void> {
  const ws = new Workspace(cwd);
  const write = (files: Record<string, string | null>) => {
    for (const [path, content] of Object.entries(files)) {
      const abs = ws.resolve(path);
      if (content === null) rmSync(abs, { force: true });
      else {
        mkdirSync(dirname(abs), { recursive: true });
        writeFileSync(abs, content);
      }
    }
  };
  write(effects.committed);
  if (effects.commits.length > 0) {
    await git(cwd, ["add", "-A"]);
    await commit(cwd, effects.commits.at(-1)!, { allowEmpty: true });
  }
  write(effects.uncommitted);
}
