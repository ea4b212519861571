/**
 * Hosted loops as MCP tools (spec §14), in either conformant style: `per-phase`, one tool per
 * phase named `pulse_<loop_id>_<phase_id>` (dots of the loop id as underscores), or `grouped`,
 * one tool per phase kind (retrieve, route, act, learn, consolidate; a custom kind under its
 * own name) taking the phase as `action`. Each tool's input schema comes from the manifest: the
 * phase's `inputs.schema` as the token's JSON Schema when it names one of the §6 tokens, else a
 * described JSON value. Plus `pulse_iterate` (one whole iteration) and `pulse_loop_status`.
 * Pure descriptions here; loop-mcp.ts runs the calls.
 */
import { readFileSync } from "node:fs";
import type { Loop } from "../runtime/loop.js";
import type { Phase } from "../manifest/types.js";
import { packageFile } from "../package-file.js";

export type ToolStyle = "per-phase" | "grouped";
export const TOOL_STYLES: readonly ToolStyle[] = ["per-phase", "grouped"];

export interface ToolTarget {
  loopId: string;
  phaseId: string;
}

export interface LoopTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  /** per-phase: the one phase it runs; grouped: the phases its `action` chooses from. */
  targets: ToolTarget[];
  kind: "phase" | "group" | "iterate" | "status";
}

export const CANONICAL_KINDS = ["retrieve", "route", "act", "learn", "consolidate"] as const;
const TOKENS = ["TopologyContext", "DeliberationResult", "OutcomeSignal", "ReputationUpdate", "ConsolidationEvent", "SurpriseSignal"];

export function perPhaseName(loopId: string, phaseId: string): string {
  return `pulse_${loopId.replace(/[^A-Za-z0-9_]/g, "_")}_${phaseId.replace(/[^A-Za-z0-9_]/g, "_")}`;
}

const tokenSchemas = new Map<string, Record<string, unknown>>();

function tokenSchema(name: string): Record<string, unknown> {
  let s = tokenSchemas.get(name);
  if (!s) {
    const { $schema: _s, $id: _i, ...rest } = JSON.parse(readFileSync(packageFile(import.meta.url, "schema", "tokens", `${name}.v0.1.json`), "utf8")) as Record<string, unknown>;
    tokenSchemas.set(name, (s = rest));
  }
  return s;
}

/** The JSON Schema of a phase's input, from `inputs.schema` (a §6 token, `Name[]`, or another name). */
export function inputSchemaOf(phase: Phase): Record<string, unknown> {
  const named = phase.inputs?.schema?.trim();
  const from = phase.inputs?.from;
  const about = `the ${phase.id} phase's input${named ? ` (${named})` : ""}${from ? `, in the manifest from ${from}` : ""}`;
  if (named) {
    const array = named.endsWith("[]");
    const base = array ? named.slice(0, -2) : named;
    if (TOKENS.includes(base)) {
      const schema = tokenSchema(base);
      return array ? { type: "array", items: schema, description: about } : { ...schema, description: `${about}. ${String(schema.description ?? "")}`.trim() };
    }
    if (array) return { type: "array", description: about };
  }
  return { description: `${about}: any JSON value (default null)` };
}

function callFields(): Record<string, unknown> {
  return {
    workspace: { type: "string", minLength: 1, description: "the workspace (tenant) it runs in (default \"default\")" },
    trace_id: { type: "string", pattern: "^[0-9a-f]{32}$", description: "the iteration it belongs to (32 lowercase hex; calls with the same trace id share one iteration; default a new one)" },
    agent_id: { type: "string", minLength: 1, description: "the agent on whose behalf it acts (policy and auth)" },
  };
}

function phaseText(loop: Loop, phase: Phase): string {
  const kind = phase.kind === "custom" ? `custom ${phase.custom_kind ?? ""}`.trim() : phase.kind;
  return `${loop.id} · ${phase.id} (${kind}${phase.idempotent ? ", idempotent" : ""}${phase.invariant ? `, invariant ${phase.invariant}` : ""})${phase.description ? `: ${phase.description.trim()}` : ""}`;
}

function groupOf(phase: Phase): string {
  return phase.kind === "custom" ? (phase.custom_kind ?? "custom").replace(/[^A-Za-z0-9_]/g, "_") : phase.kind;
}

export function loopTools(loops: readonly Loop[], style: ToolStyle): LoopTool[] {
  const tools: LoopTool[] = [];
  if (style === "per-phase") {
    for (const loop of loops) {
      for (const phase of loop.compiled.manifest.phases) {
        tools.push({
          name: perPhaseName(loop.id, phase.id),
          description: `Runs one phase through the PULSE runtime, with every invariant and audit event: ${phaseText(loop, phase)}.`,
          inputSchema: { type: "object", properties: { input: inputSchemaOf(phase), ...callFields() }, additionalProperties: false },
          targets: [{ loopId: loop.id, phaseId: phase.id }],
          kind: "phase",
        });
      }
    }
  } else {
    const groups = new Map<string, { loop: Loop; phase: Phase }[]>();
    for (const kind of CANONICAL_KINDS) groups.set(kind, []);
    for (const loop of loops) for (const phase of loop.compiled.manifest.phases) (groups.get(groupOf(phase)) ?? groups.set(groupOf(phase), []).get(groupOf(phase))!).push({ loop, phase });
    for (const [kind, members] of groups) {
      if (members.length === 0) continue;
      const actions = [...new Set(members.map((m) => m.phase.id))];
      const loopIds = [...new Set(members.map((m) => m.loop.id))];
      tools.push({
        name: kind,
        description: `The ${kind} machine (§14 grouped style): runs the phase named by action through the PULSE runtime, with every invariant and audit event. Phases: ${members.map((m) => phaseText(m.loop, m.phase)).join("; ")}.`,
        inputSchema: {
          type: "object",
          properties: {
            action: { type: "string", enum: actions, description: "the phase to run (its phase_id)" },
            ...(loopIds.length > 1 ? { loop: { type: "string", enum: loopIds, description: "the loop whose phase it is (needed when two loops have a phase of this id)" } } : {}),
            input: { description: `the phase's input: ${members.map((m) => `${m.phase.id}: ${String(inputSchemaOf(m.phase).description)}`).join("; ")}` },
            ...callFields(),
          },
          required: ["action"],
          additionalProperties: false,
        },
        targets: members.map((m) => ({ loopId: m.loop.id, phaseId: m.phase.id })),
        kind: "group",
      });
    }
  }
  const ids = loops.map((l) => l.id);
  tools.push({
    name: "pulse_iterate",
    description: "Runs one whole iteration of a loop (every phase, the closure, its signals) and answers its result: status, phases with signatures, output, audit event count.",
    inputSchema: { type: "object", properties: { loop: { type: "string", enum: ids, description: "the loop" }, input: { description: "the entry phase's input" }, workspace: callFields().workspace }, required: ["loop"], additionalProperties: false },
    targets: [],
    kind: "iterate",
  });
  tools.push({
    name: "pulse_loop_status",
    description: "The loops served here: each one's status, cadence, phases and telemetry (iteration count, closure rate, per-phase durations).",
    inputSchema: { type: "object", properties: { loop: { type: "string", enum: ids, description: "only this loop" } }, additionalProperties: false },
    targets: [],
    kind: "status",
  });
  return tools;
}
