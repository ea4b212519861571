import { describe, expect, it } from "vitest";
import { validateValue } from "../../src/validator/validate.js";
import { baseManifest } from "../helpers/manifests.js";

function findings(m: unknown, options = {}) {
  return validateValue(m, "m.json", options).diagnostics.map((d) => ({ rule: d.rule, severity: d.severity, pointer: d.pointer, message: d.message, suggestion: d.suggestion }));
}
const rules = (m: unknown, options = {}) => findings(m, options).map((f) => f.rule);

function mutate(fn: (m: Record<string, any>) => void): Record<string, any> {
  const m = baseManifest();
  fn(m);
  return m;
}

describe("the base manifest", () => {
  it("is valid without any diagnostic", () => {
    expect(findings(baseManifest())).toEqual([]);
  });
});

describe("schema findings", () => {
  it("points an unknown key at the key and suggests the near name", () => {
    const [f] = findings(mutate((m) => (m.phases[0].timeout = 5)));
    expect(f).toMatchObject({ rule: "schema/unknown-property", pointer: "/phases/0/timeout", suggestion: 'did you mean "timeout_ms"?' });
    expect(f!.message).toBe('unknown property "timeout" in phases[0]');
  });

  it("groups missing properties of one object", () => {
    const m = mutate((m) => {
      delete m.version;
      delete m.closure;
    });
    const f = findings(m).filter((d) => d.rule === "schema/required");
    expect(f).toHaveLength(1);
    expect(f[0]!.message).toBe('the manifest is missing required properties "version", "closure"');
  });

  it("says custom_kind is required for custom phases, and only for them", () => {
    const m = mutate((m) => (m.phases[1] = { id: "decide", kind: "custom" }));
    expect(findings(m).map((f) => f.message)).toContain('phases[1] is missing required property "custom_kind" (required when kind is "custom")');
    expect(rules(mutate((m) => (m.phases[1] = { id: "decide", kind: "custom", custom_kind: "triage" })))).toEqual([]);
  });

  it("suggests the nearest enum value", () => {
    const f = findings(mutate((m) => (m.phases[0].kind = "retreive"))).find((d) => d.rule === "schema/enum");
    expect(f).toMatchObject({ pointer: "/phases/0/kind", suggestion: 'did you mean "retrieve"?' });
  });

  it("suggests unquoting a quoted number", () => {
    const [f] = findings(mutate((m) => (m.phases[0].timeout_ms = "500")));
    expect(f).toMatchObject({ rule: "schema/type", suggestion: "write 500 without quotes" });
    expect(rules(mutate((m) => (m.phases[0].timeout_ms = 500)))).toEqual([]);
  });

  it("explains patterns in words", () => {
    const [f] = findings(mutate((m) => (m.loop_id = "Loop")));
    expect(f!.message).toContain('a dotted lowercase loop id such as "myorg.my_loop"');
  });

  it("requires two phases", () => {
    expect(rules(mutate((m) => m.phases.splice(1)))).toContain("schema/items");
  });
});

describe("version policy (§16)", () => {
  it.each(["0.2", "1.0", "0.10", "1.0.0"])("refuses %s naming both versions", (v) => {
    const f = findings(mutate((m) => (m.pulse_protocol_version = v)));
    expect(f.map((x) => x.rule)).toEqual(["pulse/version-unsupported"]);
    expect(f[0]!.message).toContain(`PULSE ${v}`);
    expect(f[0]!.message).toContain("supports PULSE 0.1");
  });

  it.each(["0.1", "0.1.0", "0.1.1", "0.1.12"])("accepts %s", (v) => {
    expect(rules(mutate((m) => (m.pulse_protocol_version = v)))).toEqual([]);
  });

  it("reports a malformed version as a pattern error, not as a newer version", () => {
    expect(rules(mutate((m) => (m.pulse_protocol_version = "v0.1")))).toEqual(["schema/pattern"]);
  });
});

describe("references inside one manifest", () => {
  it("reports duplicate phase ids at the second one", () => {
    const f = findings(mutate((m) => (m.phases[3].id = "fetch")));
    expect(f.filter((x) => x.rule === "pulse/duplicate-phase-id")).toEqual([expect.objectContaining({ pointer: "/phases/3/id" })]);
    // The near miss: a second phase of the same kind under its own id is fine.
    expect(rules(mutate((m) => m.phases.push({ id: "fetch_again", kind: "retrieve" })))).toEqual([]);
  });

  it("reports closure phases that do not exist, with a suggestion", () => {
    const f = findings(mutate((m) => (m.closure.to_phase = "fetc")));
    expect(f).toContainEqual(expect.objectContaining({ rule: "pulse/closure-unknown-phase", pointer: "/closure/to_phase", suggestion: 'did you mean "fetch"?' }));
  });

  it("reports endpoints naming missing phases inside alternatives", () => {
    const f = findings(mutate((m) => (m.phases[3].inputs = { from: "external|phase:nope" })));
    expect(f.map((x) => x.rule)).toEqual(["pulse/endpoint-unknown-phase"]);
    expect(rules(mutate((m) => (m.phases[3].inputs = { from: "external|phase:apply" })))).toEqual([]);
  });

  it("reports malformed endpoints", () => {
    expect(rules(mutate((m) => (m.phases[0].outputs.to = "phase:")))).toEqual(["pulse/endpoint-syntax"]);
    expect(rules(mutate((m) => (m.phases[0].outputs.to = "phaze:decide")))).toEqual(["pulse/endpoint-syntax"]);
  });

  it("reports connection emit phases and triggers naming missing phases", () => {
    const m = mutate((m) => {
      m.connections = [{ id: "c", emit_phase: "lern", token: "OutcomeSignal", to_loop: "other.loop" }];
      m.nesting = { parent_loop: null, inner_loops: [{ loop_id: "inner.loop", trigger: "phase:decid when kappa > 0", wait: "until_done" }] };
    });
    const r = rules(m);
    expect(r).toContain("pulse/connection-unknown-phase");
    expect(r).toContain("pulse/trigger-unknown-phase");
  });

  it("reports malformed triggers and expressions", () => {
    const m = mutate((m) => {
      m.connections = [{ id: "c", emit_phase: "learn", emit_condition: "status in ['a',", token: "OutcomeSignal", to_loop: "other.loop" }];
      m.nesting = { inner_loops: [{ loop_id: "inner.loop", trigger: "decide when kappa > 0", wait: "until_done" }] };
    });
    const r = rules(m);
    expect(r).toContain("pulse/expression-syntax");
    expect(r).toContain("pulse/trigger-syntax");
  });

  it("explains a stray \"=\" in a condition without asking for the \"==\" already there", () => {
    const condition = (c: string) => findings(mutate((m) => (m.connections = [{ id: "c", emit_phase: "learn", emit_condition: c, token: "OutcomeSignal", to_loop: "other.loop" }])));
    expect(condition("status == = 'success'").filter((f) => f.rule === "pulse/expression-syntax")).toEqual([
      expect.objectContaining({ pointer: "/connections/0/emit_condition", message: 'expected a value after "==", found "="' }),
    ]);
    expect(condition("status == 'success'").map((f) => f.rule)).toEqual(["pulse/connection-external"]);
  });

  it("warns about non-canonical signal tokens and unbound substrates", () => {
    expect(rules(mutate((m) => (m.phases[3].outputs = { to: "signal:OutcomSignal" })))).toEqual(["pulse/unknown-token"]);
    expect(rules(mutate((m) => (m.phases[3].outputs = { to: "signal:EscalationRequest" })))).toEqual([]);
    expect(rules(mutate((m) => (m.phases[3].outputs = { to: "substrate:time" })))).toEqual(["pulse/substrate-unbound"]);
    expect(rules(mutate((m) => ((m.phases[3].outputs = { to: "substrate:time" }), (m.substrates.time = "tick://t"))))).toEqual([]);
  });
});

describe("§3.2 structure", () => {
  it("warns without retrieve, act or grounded closure; errors under --strict", () => {
    const m = mutate((m) => {
      m.phases[0].kind = "custom";
      m.phases[0].custom_kind = "fetch";
      m.phases[2].kind = "custom";
      m.phases[2].custom_kind = "apply";
    });
    expect(findings(m).map((f) => [f.rule, f.severity])).toEqual([
      ["pulse/missing-act", "warning"],
      ["pulse/missing-retrieve", "warning"],
      ["pulse/closure-not-grounded", "warning"],
    ]);
    expect(findings(m, { strict: true }).map((f) => f.severity)).toEqual(["error", "error", "error"]);
  });

  it("requires a learn or consolidate phase up to the closure", () => {
    const m = mutate((m) => (m.closure.from_phase = "apply"));
    expect(rules(m)).toEqual(["pulse/closure-not-grounded"]);
    expect(rules(mutate((m) => (m.phases[3].kind = "consolidate")))).toEqual([]);
  });
});

describe("cadence params (§8)", () => {
  const withCadence = (cadence: unknown) => mutate((m) => (m.cadence = cadence));
  // A signal source outside the validated set is reported as info; these tests are about params.
  const paramRules = (m: unknown) => rules(m).filter((r) => r !== "pulse/signal-source-external");

  it.each([
    [{ type: "periodic", params: { interval: "1h", phase_offset: "5m" } }],
    [{ type: "periodic", params: { interval: "weekly" } }],
    [{ type: "periodic", params: { interval: "PT30S" } }],
    [{ type: "event", params: { trigger: "agent_query", filter: "priority >= 3 and source != 'test'" } }],
    [{ type: "streaming", params: { stream: "kafka://ticks", batch_size: 10 } }],
    [{ type: "idle", params: { min_idle_ms: 60000, max_iteration_per_idle: 1 } }],
    [{ type: "cross_loop_signal", params: { from_loop: "a.b", from_phase: "learn", token: "OutcomeSignal" } }],
    [{ type: "manual", params: { interface: "mcp:tool", rate_limit: "10/min" } }],
    [{ type: "manual" }],
  ])("accepts %j", (cadence) => {
    expect(paramRules(withCadence(cadence))).toEqual([]);
  });

  it.each([
    [{ type: "periodic", params: {} }, "pulse/cadence-param-missing"],
    [{ type: "periodic" }, "pulse/cadence-param-missing"],
    [{ type: "periodic", params: { interval: "1 hour" } }, "pulse/cadence-param-invalid"],
    [{ type: "periodic", params: { interval: 3600 } }, "pulse/cadence-param-invalid"],
    [{ type: "periodic", params: { interval: "0s" } }, "pulse/cadence-param-invalid"],
    [{ type: "periodic", params: { interval: "1m", phase_offset: "2m" } }, "pulse/cadence-param-invalid"],
    [{ type: "event", params: { trigger: "x", filter: "a ==" } }, "pulse/cadence-param-invalid"],
    [{ type: "idle", params: { min_idle_ms: "60s" } }, "pulse/cadence-param-invalid"],
    [{ type: "idle", params: { min_idle_ms: -1 } }, "pulse/cadence-param-invalid"],
    [{ type: "streaming", params: { stream: "s", batch_size: 0 } }, "pulse/cadence-param-invalid"],
    [{ type: "cross_loop_signal", params: { from_loop: "nodots" } }, "pulse/cadence-param-invalid"],
    [{ type: "cross_loop_signal", params: { from_loop: "a.b", token: "Outcome" } }, "pulse/cadence-param-invalid"],
    [{ type: "manual", params: { rate_limit: "ten per minute" } }, "pulse/cadence-param-invalid"],
    [{ type: "manual", params: { rate_limt: "10/min" } }, "pulse/cadence-param-unknown"],
    [{ type: "manual", fallback: { type: "manual" } }, "pulse/cadence-fallback-redundant"],
    [{ type: "manual", fallback: { type: "periodic", params: {} } }, "pulse/cadence-param-missing"],
  ])("flags %j", (cadence, rule) => {
    expect(paramRules(withCadence(cadence))).toEqual([rule]);
  });

  it("suggests the parameter name a typo meant", () => {
    const [f] = findings(withCadence({ type: "manual", params: { rate_limt: "10/min" } }));
    expect(f!.suggestion).toBe('did you mean "rate_limit"?');
  });
});

describe("phase fields", () => {
  it("checks signature recipes", () => {
    expect(rules(mutate((m) => (m.phases[0].signature = "hash(query, k)")))).toEqual([]);
    expect(rules(mutate((m) => (m.phases[0].signature = "hash(query, query)")))).toEqual(["pulse/signature-recipe"]);
    expect(rules(mutate((m) => (m.phases[0].signature = "sha(query)")))).toEqual(["pulse/signature-recipe"]);
  });

  it("warns when max_retries cannot apply", () => {
    expect(rules(mutate((m) => (m.phases[0].max_retries = 2)))).toEqual(["pulse/max-retries-ignored"]);
    expect(rules(mutate((m) => Object.assign(m.phases[0], { max_retries: 2, on_failure: "retry" })))).toEqual([]);
  });

  it("warns when a phase relies on a disabled invariant", () => {
    expect(rules(mutate((m) => (m.phases[1].invariant = "kappa_routing")))).toEqual(["pulse/phase-invariant-disabled"]);
    expect(rules(mutate((m) => ((m.phases[1].invariant = "kappa_routing"), (m.invariants.kappa_routing = true))))).toEqual([]);
  });

  it("warns about custom_kind on canonical phases", () => {
    expect(rules(mutate((m) => (m.phases[1].custom_kind = "triage")))).toEqual(["pulse/custom-kind-ignored"]);
    // The near miss: on a custom phase, custom_kind is what names it.
    expect(rules(mutate((m) => (m.phases[1] = { id: "decide", kind: "custom", custom_kind: "triage" })))).toEqual([]);
  });
});

describe("connections and nesting", () => {
  const conn = (extra: object) => ({ id: "c", emit_phase: "learn", token: "OutcomeSignal", to_loop: "other.loop", ...extra });

  it("reports duplicate connection ids and overflow policies without a limit", () => {
    expect(rules(mutate((m) => (m.connections = [conn({}), conn({})])))).toContain("pulse/duplicate-connection-id");
    expect(rules(mutate((m) => (m.connections = [conn({ overflow_policy: "drop_oldest" })])))).toContain("pulse/overflow-without-limit");
    expect(rules(mutate((m) => (m.connections = [conn({ overflow_policy: "drop_oldest", max_inflight: 4 })])))).toEqual(["pulse/connection-external"]);
  });

  it("checks bounded waits and self nesting", () => {
    const inner = (extra: object) => mutate((m) => (m.nesting = { inner_loops: [{ loop_id: "inner.loop", trigger: "phase:decide", ...extra }] }));
    expect(rules(inner({ wait: "bounded" }))).toContain("pulse/bounded-without-timeout");
    expect(rules(inner({ wait: "bounded", timeout_ms: 100 }))).toEqual(["pulse/inner-loop-external"]);
    expect(rules(inner({ wait: "until_done", timeout_ms: 100 }))).toContain("pulse/timeout-ignored");
    expect(rules(mutate((m) => (m.nesting = { parent_loop: "test.loop" })))).toContain("pulse/nesting-cycle");
    const twice = mutate((m) => (m.nesting = { inner_loops: [0, 1].map(() => ({ loop_id: "inner.loop", trigger: "phase:decide", wait: "until_done" })) }));
    expect(rules(twice)).toContain("pulse/duplicate-inner-loop");
  });
});

describe("diagnostic order", () => {
  // Findings arrive rule by rule; a file's diagnostics are listed in document order (line,
  // column, then severity and rule), for short lists and long ones alike.
  const isOrdered = (ds: { line: number; column: number; severity: string; rule: string }[]): boolean => {
    const rank = { error: 0, warning: 1, info: 2 } as Record<string, number>;
    for (let i = 1; i < ds.length; i++) {
      const a = ds[i - 1]!, b = ds[i]!;
      const c = a.line - b.line || a.column - b.column || rank[a.severity]! - rank[b.severity]! || (a.rule < b.rule ? -1 : a.rule > b.rule ? 1 : 0);
      if (c > 0) return false;
    }
    return true;
  };

  it.each([3, 40])("orders %i out-of-order findings by position", (n) => {
    const m = mutate((m) => {
      m.connections = Array.from({ length: n }, (_, i) => ({ id: "dup", emit_phase: "nowhere", token: "OutcomeSignal", to_loop: "other.loop" }));
      m.phases[0].max_retries = 1;
      m.phases[0].on_failure = "skip";
    });
    const ds = validateValue(m, "m.json").diagnostics;
    expect(ds.length).toBeGreaterThan(n);
    expect(isOrdered(ds)).toBe(true);
    // The emit_phase error of each connection precedes its later-reported external info.
    const first = ds.filter((d) => d.pointer.startsWith("/connections/0/"));
    expect(first.map((d) => d.severity)).toEqual(["error", "info"]);
  });
});
