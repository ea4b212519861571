/**
 * The validator and the runtime read the protocol's vocabularies from the TypeScript constants;
 * editors and third-party validators read them from the schemas. These must never drift apart.
 */
import { describe, expect, it } from "vitest";
import * as M from "../../src/manifest/types.js";
import * as T from "../../src/tokens/types.js";
import { ENVELOPE_SCHEMA_FILE, MANIFEST_SCHEMA_FILE, isObject, loadSchema, tokenSchemaFile, type JsonObject } from "./schemas.js";

const manifest = loadSchema(MANIFEST_SCHEMA_FILE);

/** The value at a `/`-separated path of plain keys inside a schema. */
function at(schema: JsonObject, path: string): unknown {
  let node: unknown = schema;
  for (const key of path.split("/")) {
    if (!isObject(node)) throw new Error(`no ${path}`);
    node = node[key];
  }
  return node;
}

const keysAt = (schema: JsonObject, path: string): string[] => {
  const node = at(schema, path);
  if (!isObject(node)) throw new Error(`${path} is not an object`);
  return Object.keys(node);
};

const matches = (schema: JsonObject, path: string, value: string): boolean =>
  new RegExp(String(at(schema, path)), "u").test(value);

describe("manifest constants equal the manifest schema", () => {
  it.each([
    ["PHASE_KINDS", M.PHASE_KINDS, "$defs/phase/properties/kind/enum"],
    ["CADENCE_TYPES", M.CADENCE_TYPES, "$defs/cadence/properties/type/enum"],
    ["REQUIRED_SUBSTRATE_SLOTS", M.REQUIRED_SUBSTRATE_SLOTS, "$defs/substrates/required"],
    ["WAIT_MODES", M.WAIT_MODES, "$defs/inner_loop/properties/wait/enum"],
    ["DELIVERY_MODES", M.DELIVERY_MODES, "$defs/connection/properties/delivery/enum"],
    ["OVERFLOW_POLICIES", M.OVERFLOW_POLICIES, "$defs/connection/properties/overflow_policy/enum"],
    ["ON_FAILURE_ACTIONS", M.ON_FAILURE_ACTIONS, "$defs/phase/properties/on_failure/enum"],
    ["GUARANTEES", M.GUARANTEES, "$defs/closure/properties/guarantee/enum"],
    ["WORKSPACE_SCOPES", M.WORKSPACE_SCOPES, "properties/workspace_scope/enum"],
    ["CONNECTION_CADENCES", M.CONNECTION_CADENCES, "$defs/connection/properties/cadence/enum"],
    ["TOKEN_NAMES", M.TOKEN_NAMES, "$defs/connection/properties/token/enum"],
  ])("%s", (_name, constant, path) => {
    expect([...constant]).toEqual(at(manifest, path));
  });

  it("SUBSTRATE_SLOTS are the substrate object's properties", () => {
    expect([...M.SUBSTRATE_SLOTS]).toEqual(keysAt(manifest, "$defs/substrates/properties"));
  });

  it("INVARIANT_NAMES are the invariants object's properties, in §7 order", () => {
    expect([...M.INVARIANT_NAMES]).toEqual(keysAt(manifest, "$defs/invariants/properties"));
  });

  it("CANONICAL_PHASE_KINDS are the phase kinds without the custom escape hatch", () => {
    expect([...M.CANONICAL_PHASE_KINDS, "custom"]).toEqual([...M.PHASE_KINDS]);
  });

  it("ENVELOPES holds the one envelope the schema allows", () => {
    expect([...M.ENVELOPES]).toEqual([at(manifest, "$defs/connection/properties/envelope/const")]);
  });

  it("MANIFEST_SCHEMA_ID is the schema's $id and SUPPORTED_PROTOCOL_VERSION passes its pattern", () => {
    expect(M.MANIFEST_SCHEMA_ID).toBe(manifest.$id);
    expect(matches(manifest, "properties/pulse_protocol_version/pattern", M.SUPPORTED_PROTOCOL_VERSION)).toBe(true);
  });
});

describe("the TypeScript interfaces name exactly the schema's properties", () => {
  // `satisfies Record<keyof X, true>` makes tsc fail when an interface gains or loses a field;
  // the comparison below makes the test fail when the schema does.
  const interfaces: Array<[string, string[], string]> = [
    ["Manifest", Object.keys({ $schema: true, pulse_protocol_version: true, loop_id: true, loop_name: true, version: true, owner: true, workspace_scope: true, description: true, phases: true, closure: true, cadence: true, nesting: true, substrates: true, invariants: true, connections: true, telemetry: true } satisfies Record<keyof M.Manifest, true>), "properties"],
    ["Phase", Object.keys({ id: true, kind: true, custom_kind: true, description: true, inputs: true, outputs: true, idempotent: true, signature: true, timeout_ms: true, on_failure: true, max_retries: true, invariant: true, policy_check: true, audit_event: true, parallel: true } satisfies Record<keyof M.Phase, true>), "$defs/phase/properties"],
    ["PhaseInputs", Object.keys({ from: true, schema: true } satisfies Record<keyof M.PhaseInputs, true>), "$defs/phase/properties/inputs/properties"],
    ["PhaseOutputs", Object.keys({ to: true, schema: true } satisfies Record<keyof M.PhaseOutputs, true>), "$defs/phase/properties/outputs/properties"],
    ["Closure", Object.keys({ from_phase: true, to_phase: true, via: true, guarantee: true } satisfies Record<keyof M.Closure, true>), "$defs/closure/properties"],
    ["Cadence", Object.keys({ type: true, params: true, fallback: true } satisfies Record<keyof M.Cadence, true>), "$defs/cadence/properties"],
    ["Nesting", Object.keys({ parent_loop: true, inner_loops: true } satisfies Record<keyof M.Nesting, true>), "$defs/nesting/properties"],
    ["InnerLoop", Object.keys({ loop_id: true, trigger: true, wait: true, timeout_ms: true } satisfies Record<keyof M.InnerLoop, true>), "$defs/inner_loop/properties"],
    ["Substrates", Object.keys({ memory: true, policy: true, audit: true, auth: true, transport: true, time: true } satisfies Record<keyof M.Substrates, true>), "$defs/substrates/properties"],
    ["Invariants", Object.keys({ phase_atomicity: true, feedback_immutability: true, append_only_audit: true, kappa_routing: true, quorum_before_commit: true, outcome_grounding: true, trace_id_propagation: true } satisfies Record<keyof M.Invariants, true>), "$defs/invariants/properties"],
    ["Connection", Object.keys({ id: true, emit_phase: true, emit_condition: true, envelope: true, token: true, to_loop: true, to_phase: true, cadence: true, delivery: true, max_inflight: true, overflow_policy: true } satisfies Record<keyof M.Connection, true>), "$defs/connection/properties"],
    ["Telemetry", Object.keys({ namespace: true, phase_metrics: true, loop_metrics: true } satisfies Record<keyof M.Telemetry, true>), "$defs/telemetry/properties"],
  ];

  it.each(interfaces)("%s", (_name, fields, path) => {
    expect(fields.sort()).toEqual(keysAt(manifest, path).sort());
  });
});

describe("token constants equal the token schemas", () => {
  it.each([
    ["OUTCOME_STATUSES", T.OUTCOME_STATUSES, "OutcomeSignal", "properties/status/enum"],
    ["SUBJECT_TYPES", T.SUBJECT_TYPES, "ReputationUpdate", "properties/subject_type/enum"],
    ["TIMESCALES", T.TIMESCALES, "ConsolidationEvent", "properties/timescale/enum"],
    ["CONVERGENCE_STATUSES", T.CONVERGENCE_STATUSES, "ConsolidationEvent", "properties/convergence_status/enum"],
    ["CONSENSUS_TYPES", T.CONSENSUS_TYPES, "DeliberationResult", "properties/consensus_type/enum"],
    ["ROUTING_DECISIONS", T.ROUTING_DECISIONS, "TopologyContext", "properties/routing/enum"],
    ["ROUTING_DECISIONS (per SCC)", T.ROUTING_DECISIONS, "TopologyContext", "properties/sccs/items/properties/routing/enum"],
    ["BODY_SUBTYPES", T.BODY_SUBTYPES, "SurpriseSignal", "properties/body_subtype/enum"],
    ["SURPRISE_KINDS", T.SURPRISE_KINDS, "SurpriseSignal", "properties/surprise_kind/enum"],
  ])("%s", (_name, constant, token, path) => {
    expect([...constant]).toEqual(at(loadSchema(tokenSchemaFile(token)), path));
  });

  it.each([...T.TOKEN_NAMES])("%s: token const, TOKEN_VERSION accepted by its version pattern", (token) => {
    const schema = loadSchema(tokenSchemaFile(token));
    expect(at(schema, "properties/token/const")).toBe(token);
    expect(matches(schema, "properties/version/pattern", T.TOKEN_VERSION)).toBe(true);
  });

  it("the envelope's event types are PULSE_EVENT_TYPE_PREFIX + each token name, and data.token lists them all", () => {
    const envelope = loadSchema(ENVELOPE_SCHEMA_FILE);
    expect(at(envelope, "properties/type/enum")).toEqual(T.TOKEN_NAMES.map((t) => `${T.PULSE_EVENT_TYPE_PREFIX}${t}`));
    expect(at(envelope, "properties/data/properties/token/enum")).toEqual([...T.TOKEN_NAMES]);
  });
});
