/**
 * Every coding loop's runs over REST and MCP (the common run view): GET /api/runs?kind=… (newest
 * first), GET /api/runs/:kind/:id (the run and its steps: a session's iterations, a workflow's
 * pulses, an agent's steps); MCP tools runs_list and run_status. Read-only: each loop's own
 * endpoints steer it. Statuses as displayed: a run whose runner is gone is `interrupted`.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { RUN_KINDS, RunRecordsError, runKindOf, type RunKind, type RunRecords, type RunStepView, type RunView } from "../coding/run-records.js";
import { errorBody, HttpError, segment, sendJson } from "./rest.js";

export async function runDetail(records: RunRecords, kind: RunKind, id: string): Promise<{ run: RunView; steps: RunStepView[] }> {
  const run = await records.get(kind, id);
  if (!run) throw new HttpError(404, "NOT_FOUND", `no ${kind} run ${id} (GET /api/runs lists them)`);
  return { run, steps: await records.steps(kind, run.id) };
}

function kindOf(v: unknown): RunKind | undefined {
  try {
    return runKindOf(v);
  } catch (e) {
    if (e instanceof RunRecordsError) throw new HttpError(400, "BAD_REQUEST", e.message);
    throw e;
  }
}

/** Handles /api/runs…; returns false for other paths. */
export async function handleRunsRest(records: RunRecords, req: IncomingMessage, res: ServerResponse): Promise<boolean> {
  const url = new URL(req.url ?? "/", "http://localhost");
  const parts = url.pathname.split("/").filter(Boolean);
  if (parts[0] !== "api" || parts[1] !== "runs") return false;
  try {
    if ((req.method ?? "GET") !== "GET") throw new HttpError(405, "METHOD_NOT_ALLOWED", `${req.method} ${url.pathname}: use GET (each loop's own endpoints steer its runs)`);
    if (parts.length === 2) {
      const kind = kindOf(url.searchParams.get("kind") ?? undefined);
      sendJson(res, 200, { runs: await records.list(kind ? { kind } : {}) });
    } else if (parts.length === 4) {
      const kind = kindOf(segment(parts[2]!));
      if (!kind) throw new HttpError(400, "BAD_REQUEST", `kind: must be one of ${RUN_KINDS.join(", ")}`);
      sendJson(res, 200, await runDetail(records, kind, segment(parts[3]!)));
    } else throw new HttpError(404, "NOT_FOUND", `no such endpoint: ${url.pathname} (GET /api/runs?kind=, GET /api/runs/:kind/:id)`);
  } catch (e) {
    const { status, body, headers } = errorBody(e);
    sendJson(res, status, body, headers);
  }
  return true;
}

async function answer(fn: () => Promise<unknown>) {
  try {
    const value = await fn();
    return { content: [{ type: "text" as const, text: JSON.stringify(value, null, 2) }], structuredContent: { result: value } as Record<string, unknown> };
  } catch (e) {
    return { content: [{ type: "text" as const, text: (e as Error).message }], isError: true };
  }
}

export function registerRunTools(server: McpServer, records: RunRecords): void {
  server.registerTool(
    "runs_list",
    { description: "Every coding loop's runs (sessions, workflows, agent runs), newest first: status (interrupted when the runner is gone), goal, iteration x/N, commits, tokens, cost.", inputSchema: { kind: z.enum(["session", "workflow", "agent"]).optional() } },
    ({ kind }) => answer(() => records.list(kind ? { kind } : {})),
  );
  server.registerTool(
    "run_status",
    { description: "One run of any coding loop and its steps (a session's iterations, a workflow's pulses, an agent's steps).", inputSchema: { kind: z.enum(["session", "workflow", "agent"]), id: z.string().min(4).describe("the run's id or a unique prefix of at least 4 characters") } },
    ({ kind, id }) => answer(() => runDetail(records, kind, id)),
  );
}
