/**
 * An action run as a subprocess (seed 002, done as the seed says and its code does not): a
 * folder of its own (`<runs>/<actionRunId>`: request, logs, result), the kit's environment
 * allowlist, closed stdin, its own process group, `timeout_sec` enforced with SIGTERM and then
 * SIGKILL on the group, stdout and stderr captured, and the network off unless it is tagged
 * `network` (a network namespace where the kernel allows it, else the Node guard).
 */
import { mkdirSync, readFileSync, writeFileSync, existsSync } from "node:fs";
import { extname, join } from "node:path";
import { buildEnv } from "../cli/env.js";
import { runProcess } from "../cli/run-process.js";
import type { ActionExecutor, ActionRunContext } from "../../../src/coding/agent/actions/executor.js";
import type { ActionResult, ActionSpec } from "../../../src/coding/agent/types.js";
import { GUARD_SOURCE, HARNESS_SOURCE } from "./harness-source.js";
import { namespacesAvailable } from "./network.js";

function command(spec: ActionSpec, runDir: string, args: Record<string, unknown>, guard: boolean): { command: string; args: string[]; node: boolean } {
  const preload = guard ? ["--import", join(runDir, "guard.mjs")] : [];
  if (spec.layout === "perform") return { command: process.execPath, args: [...preload, join(runDir, "harness.mjs"), runDir], node: true };
  const script = join(spec.dir, spec.entry!);
  const json = JSON.stringify(args);
  switch (extname(script)) {
    case ".sh":
      return { command: "bash", args: [script, json], node: false };
    case ".py":
      return { command: "python3", args: [script, json], node: false };
    default:
      return { command: process.execPath, args: [...preload, script, json], node: true };
  }
}

function readJson(path: string): unknown {
  try {
    return existsSync(path) ? JSON.parse(readFileSync(path, "utf8")) : undefined;
  } catch {
    return undefined;
  }
}

function logsOf(runDir: string): string[] {
  const path = join(runDir, "logs.jsonl");
  if (!existsSync(path)) return [];
  return readFileSync(path, "utf8").split("\n").filter(Boolean).map((line) => {
    try {
      const l = JSON.parse(line) as { message?: string; data?: unknown };
      return l.data === undefined ? String(l.message) : `${l.message} ${JSON.stringify(l.data)}`;
    } catch {
      return line;
    }
  });
}

export const runActionProcess: ActionExecutor = async (spec, args, ctx: ActionRunContext): Promise<ActionResult> => {
  const runDir = join(ctx.runsDir, ctx.actionRunId);
  mkdirSync(runDir, { recursive: true });
  writeFileSync(join(runDir, "request.json"), JSON.stringify({ runId: ctx.runId, actionRunId: ctx.actionRunId, dir: spec.dir, args, files: ctx.files }));
  writeFileSync(join(runDir, "harness.mjs"), HARNESS_SOURCE);
  const networkAllowed = spec.tags.includes("network");
  if (!networkAllowed) writeFileSync(join(runDir, "guard.mjs"), GUARD_SOURCE);
  const cmd = command(spec, runDir, args, !networkAllowed);
  const namespace = !networkAllowed && namespacesAvailable();
  const network: ActionResult["network"] = networkAllowed ? "allowed" : namespace ? "namespace" : cmd.node ? "guard" : "unenforced";
  const env = buildEnv({ parent: ctx.parentEnv, passThrough: [], set: { PULSE_RUN_ID: ctx.runId, PULSE_ACTION_RUN_ID: ctx.actionRunId, PULSE_ACTION_DIR: runDir }, cwd: ctx.workdir });
  // unshare without --fork execs the command: the process keeps the pid and group runProcess gave it.
  const out = await runProcess(
    { command: namespace ? "unshare" : cmd.command, args: namespace ? ["-rn", cmd.command, ...cmd.args] : cmd.args, cwd: ctx.workdir, env, timeoutMs: spec.timeout_sec * 1000, killGraceMs: (ctx.killGraceSec ?? 2) * 1000, maxOutputBytes: 256 * 1024 },
    { ...(ctx.signal ? { signal: ctx.signal } : {}), ...(ctx.onSpawn ? { onSpawn: ctx.onSpawn } : {}), ...(ctx.marker ? { marker: ctx.marker } : {}) },
  );
  const base = { actionRunId: ctx.actionRunId, name: spec.name, logs: logsOf(runDir), stdout: out.stdout, stderr: out.stderr, exit: { code: out.code, signal: out.signal }, network, durationMs: Math.round(out.durationMs) };
  if (out.reason === "timeout") return { ...base, status: "error", result: "", error: `timed out after ${spec.timeout_sec} s: SIGTERM, then SIGKILL to its process group`, ended: "timeout" };
  if (out.reason === "aborted") return { ...base, status: "error", result: "", error: "stopped: the run was aborted", ended: "aborted" };
  if (out.reason === "spawn_error") return { ...base, status: "error", result: "", error: `could not start: ${out.error}`, ended: "spawn_error" };
  if (spec.layout === "perform") {
    const r = readJson(join(runDir, "result.json")) as { status?: unknown; result?: unknown; data?: unknown; error?: unknown; logs?: unknown } | undefined;
    if (!r || (r.status !== "ok" && r.status !== "error")) return { ...base, status: "error", result: "", error: r ? `perform.js returned ${JSON.stringify(r).slice(0, 200)}, not {status: "ok"|"error", result}` : `exited ${out.code ?? out.signal} without a result`, ended: "exited" };
    const logs = Array.isArray(r.logs) ? [...base.logs, ...r.logs.map(String)] : base.logs;
    return { ...base, logs, status: r.status, result: typeof r.result === "string" ? r.result : JSON.stringify(r.result ?? ""), ...(r.data !== undefined ? { data: r.data } : {}), error: typeof r.error === "string" ? r.error : null, ended: "exited" };
  }
  // A skill's script: its exit code says ok or error; a JSON object on stdout may say more.
  const parsed = (() => {
    try {
      const v = JSON.parse(out.stdout.trim()) as Record<string, unknown>;
      return v && typeof v === "object" && (v.status === "ok" || v.status === "error") ? v : undefined;
    } catch {
      return undefined;
    }
  })();
  const status = parsed ? (parsed.status as "ok" | "error") : out.code === 0 ? "ok" : "error";
  return { ...base, status, result: parsed && typeof parsed.result === "string" ? parsed.result : out.stdout.trim(), error: status === "error" ? (parsed && typeof parsed.error === "string" ? parsed.error : out.stderr.trim().split("\n").at(-1) || `exit ${out.code ?? out.signal}`) : null, ended: "exited" };
};
