/**
 * The MCP server of `pulse mcp`: the tools loop-tools.ts describes, each call run through the
 * host's runtime (Loop.invokePhase for a phase: its invariants, signature, idempotent replay
 * and audit events, as the conformance driver's phase.invoke; Host.trigger for an iteration).
 * A refused call (bad arguments, a failed phase, an invariant) is a tool error saying why.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import type { Host } from "../host/host.js";
import { errorReport } from "../runtime/iteration-result.js";
import type { PulseError } from "../runtime/errors.js";
import { newTraceId } from "../runtime/trace.js";
import { VERSION } from "../version.js";
import { loopTools, type LoopTool, type ToolStyle, type ToolTarget } from "./loop-tools.js";

type Result = { content: { type: "text"; text: string }[]; structuredContent?: Record<string, unknown>; isError?: boolean };

class ToolInputError extends Error {}

function ok(value: Record<string, unknown>): Result {
  return { content: [{ type: "text", text: JSON.stringify(value, null, 2) }], structuredContent: value };
}

function refused(message: string, detail?: Record<string, unknown>): Result {
  return { content: [{ type: "text", text: message }], isError: true, ...(detail ? { structuredContent: detail } : {}) };
}

function args(tool: LoopTool, given: unknown): Record<string, unknown> {
  const a = given ?? {};
  if (typeof a !== "object" || Array.isArray(a)) throw new ToolInputError(`${tool.name} takes an object of arguments`);
  const props = (tool.inputSchema.properties ?? {}) as Record<string, { enum?: string[] }>;
  for (const k of Object.keys(a)) if (!(k in props)) throw new ToolInputError(`${tool.name} has no argument ${JSON.stringify(k)} (it takes ${Object.keys(props).join(", ")})`);
  const r = a as Record<string, unknown>;
  for (const k of ["workspace", "agent_id", "loop", "action"]) if (r[k] !== undefined && (typeof r[k] !== "string" || r[k] === "")) throw new ToolInputError(`${k} must be a non-empty string`);
  if (r.trace_id !== undefined && (typeof r.trace_id !== "string" || !/^[0-9a-f]{32}$/.test(r.trace_id))) throw new ToolInputError("trace_id must be 32 lowercase hex digits");
  for (const k of ["loop", "action"]) if (r[k] !== undefined && props[k]?.enum && !props[k]!.enum!.includes(r[k] as string)) throw new ToolInputError(`${k} must be one of ${props[k]!.enum!.join(", ")}, not ${JSON.stringify(r[k])}`);
  return r;
}

function targetOf(tool: LoopTool, a: Record<string, unknown>): ToolTarget {
  if (tool.kind === "phase") return tool.targets[0]!;
  if (typeof a.action !== "string") throw new ToolInputError(`${tool.name} needs action: the phase to run (${[...new Set(tool.targets.map((t) => t.phaseId))].join(", ")})`);
  const matching = tool.targets.filter((t) => t.phaseId === a.action && (a.loop === undefined || t.loopId === a.loop));
  if (matching.length === 0) throw new ToolInputError(`no ${tool.name} phase ${JSON.stringify(a.action)}${a.loop ? ` in loop ${a.loop}` : ""}`);
  if (matching.length > 1) throw new ToolInputError(`${matching.length} loops have a ${tool.name} phase ${a.action} (${matching.map((t) => t.loopId).join(", ")}): say which with loop`);
  return matching[0]!;
}

export function createLoopMcpServer(host: Host, style: ToolStyle): Server {
  const tools = loopTools(host.loops, style);
  const byName = new Map(tools.map((t) => [t.name, t]));
  const server = new Server({ name: "pulse-loops", version: VERSION }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: tools.map(({ name, description, inputSchema }) => ({ name, description, inputSchema: inputSchema as { type: "object" } })) }));
  server.setRequestHandler(CallToolRequestSchema, async (request): Promise<Result> => {
    const tool = byName.get(request.params.name);
    if (!tool) return refused(`no tool ${request.params.name} here (tools: ${tools.map((t) => t.name).join(", ")})`);
    try {
      const a = args(tool, request.params.arguments);
      if (tool.kind === "status") return ok({ loops: host.loops.filter((l) => a.loop === undefined || l.id === a.loop).map((l) => ({ loop_id: l.id, status: l.status(), cadence: l.compiled.manifest.cadence, phases: l.compiled.manifest.phases.map((p) => ({ id: p.id, kind: p.kind })), telemetry: l.telemetry() })) });
      if (tool.kind === "iterate") {
        const r = await host.trigger(a.loop as string, { ...(a.workspace ? { workspace: a.workspace as string } : {}), ...(a.input !== undefined ? { input: a.input } : {}), cause: { trigger: "manual", via: "mcp" } });
        const result = { ...r } as unknown as Record<string, unknown>;
        return r.status === "completed" ? ok(result) : { ...ok(result), isError: true };
      }
      const target = targetOf(tool, a);
      const loop = host.loop(target.loopId)!;
      const traceId = (a.trace_id as string | undefined) ?? newTraceId();
      const workspace = (a.workspace as string | undefined) ?? host.workspace;
      const { outcome, audit_events } = await loop.invokePhase(target.phaseId, { workspace, traceId, ...(a.input !== undefined ? { input: a.input } : {}), ...(a.agent_id ? { agentId: a.agent_id as string } : {}) });
      const base = { loop_id: target.loopId, phase_id: target.phaseId, workspace, trace_id: traceId, signature: outcome.signature, audit_events };
      if (outcome.kind === "completed") return ok({ ...base, status: "completed", output: outcome.output, replayed: outcome.replayed });
      const error = errorReport(outcome.error as PulseError);
      return refused(`${target.loopId} ${target.phaseId} failed: ${error.code}: ${error.message}`, { ...base, status: "failed", directive: outcome.directive, error });
    } catch (e) {
      return refused(e instanceof ToolInputError ? e.message : `${(e as { code?: string }).code ? `${(e as { code: string }).code}: ` : ""}${(e as Error).message}`);
    }
  });
  return server;
}
