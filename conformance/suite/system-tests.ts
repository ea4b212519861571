/** §12 tests 8 to 12: signals between loops, outages, tenants, traces and manifests. */
import { validateValue } from "../../src/validator/validate.js";
import { RuntimeError } from "../driver/driver.js";
import { traceId } from "../harness/context.js";
import { standardLoop, token, WS, ACT } from "./manifests.js";
import { TRANSITIONS, type ConformanceTest } from "./test.js";


export const crossLoopSignal: ConformanceTest = {
  number: 8,
  name: "cross_loop_signal_delivery",
  summary: "loop A's learn phase emits an OutcomeSignal to loop B (cadence cross_loop_signal): B's phase receives that token within B's cadence, never before A emitted it",
  async run(ctx) {
    await ctx.configure();
    const a = "conformance.emitter";
    const b = "conformance.receiver";
    await ctx.load(
      standardLoop(b, { cadence: { type: "cross_loop_signal", params: { from_loop: a, from_phase: "learn", token: "OutcomeSignal" } } }),
      { fetch: { calls: [{ slot: "memory", operation: "retrieve_context", args: { query: "$input.action_id" } }], output: {} }, apply: ACT },
    );
    await ctx.load(standardLoop(a, { connections: [{ id: "a_to_b", emit_phase: "learn", envelope: "cloudevents.v1", token: "OutcomeSignal", to_loop: b, to_phase: "fetch", delivery: "at_least_once" }] }), {
      apply: ACT,
      learn: { output: token("OutcomeSignal", "$trace", { action_id: "act_conformance_8", status: "success" }) },
    });
    const it = await ctx.whileAdvancing(ctx.driver.call("iteration.run", { loop_id: a, workspace: WS, trace_id: traceId(1, 8), input: {} }), 10_000);
    if (!it.phases.some((p) => p.phase_id === "learn" && p.status === "completed")) {
      ctx.skip(`loop A never completed its emitting phase (${it.error?.code ?? it.status})`);
      return;
    }
    const audit = await ctx.auditEvents();
    const emittedAt = audit.findIndex((e) => e.loop_id === a && e.phase_id === "learn" && TRANSITIONS.has(e.event_type));
    // A cross_loop_signal cadence fires on arrival: allow one second of loop time for delivery.
    await ctx.advance(1_000);
    const calls = await ctx.calls();
    const received = calls.filter((c) => c.operation === "retrieve_context" && (c.args as { query?: unknown }).query === "act_conformance_8");
    const after = await ctx.auditEvents();
    const bRan = after.findIndex((e) => e.loop_id === b && TRANSITIONS.has(e.event_type));
    ctx.attach(after, calls.filter((c) => c.operation === "retrieve_context"));
    ctx.check("B's receiving phase got A's OutcomeSignal within 1 s of loop time", received.length >= 1, "B queried act_conformance_8", received.length === 0 ? "never delivered" : `delivered (${received.length}×)`);
    ctx.check("B ran only after A emitted", bRan === -1 || bRan > emittedAt, "B's first phase after A's learn", bRan === -1 ? "B never ran" : `B at audit #${bRan}, A's learn at #${emittedAt}`);
    const signalAudit = after.filter((e) => e.event_type.startsWith("signal."));
    ctx.check("the signal was audited (§7.3: every signal produces an audit event)", signalAudit.length >= 1, "≥ 1 signal.* audit event", signalAudit.map((e) => e.event_type));
  },
};

export const substrateUnavailable: ConformanceTest = {
  number: 9,
  name: "substrate_unavailable_degrades",
  summary: "memory goes unavailable for a window: a bounded number of attempts, the circuit opens, calls fail fast while open, and the loop recovers after",
  async run(ctx) {
    const threshold = 3;
    const cooldown = 5_000;
    await ctx.configure({ circuit: { failure_threshold: threshold, cooldown_ms: cooldown } });
    const loopId = await ctx.load(standardLoop("conformance.degrade"), { fetch: { calls: [{ slot: "memory", operation: "retrieve_context", args: { query: "q" } }], output: {} }, apply: ACT });
    const run = (n: number) => ctx.whileAdvancing(ctx.driver.call("iteration.run", { loop_id: loopId, workspace: WS, trace_id: traceId(n, 9), input: {} }), 2_000);
    const healthy = await run(1);
    if (healthy.status !== "completed") {
      ctx.skip(`the loop did not complete an iteration with memory available (${healthy.error?.code ?? healthy.status})`);
      return;
    }
    const before = (await ctx.calls()).length;
    await ctx.observer.fail("memory");
    const outcomes: string[] = [];
    for (let n = 2; n < 12; n++) outcomes.push((await run(n)).error?.code ?? "completed");
    const during = (await ctx.calls()).slice(before).filter((c) => c.slot === "memory");
    const status = await ctx.driver.call("status.get", { loop_id: loopId });
    ctx.check(`ten iterations during the outage reach memory a bounded number of times (≤ ${threshold * 2})`, during.length <= threshold * 2, `≤ ${threshold * 2}`, during.length);
    ctx.check("the memory circuit is open", status.circuits.memory === "open", "open", status.circuits.memory ?? "(not reported)");
    ctx.check("iterations after it opened fail fast with CIRCUIT_OPEN", outcomes.slice(threshold + 1).every((o) => o === "CIRCUIT_OPEN" || o === "SUBSTRATE_UNAVAILABLE") && outcomes.includes("CIRCUIT_OPEN"), "CIRCUIT_OPEN", outcomes);
    await ctx.observer.heal("memory");
    await ctx.advance(cooldown + 500, 500);
    const recovered = await run(20);
    const after = await ctx.driver.call("status.get", { loop_id: loopId });
    ctx.check("after the outage and the cooldown, an iteration completes", recovered.status === "completed", "completed", `${recovered.status}${recovered.error ? ` (${recovered.error.code})` : ""}`);
    ctx.check("and the circuit is closed again", after.circuits.memory === "closed", "closed", after.circuits.memory ?? "(not reported)");
    if (ctx.checks.some((c) => c.outcome === "fail")) ctx.attach([], during);
  },
};

export const multiTenant: ConformanceTest = {
  number: 10,
  name: "multi_tenant_isolation",
  summary: "two workspaces run the same loop with the same trace id and the same phase signature: neither sees the other's outputs, substrate context or audit events",
  async run(ctx) {
    await ctx.configure();
    const loopId = await ctx.load(standardLoop("conformance.tenants", {}, { fetch: { idempotent: true, signature: "hash(query)" } }), {
      fetch: { calls: [{ slot: "memory", operation: "store_node", args: { node: { id: "seen-by-$input.marker" } } }], output: { marker: "$input.marker" } },
      apply: ACT,
    });
    const trace = traceId(1, 10);
    const invoke = (ws: string) => ctx.driver.call("phase.invoke", { loop_id: loopId, workspace: ws, trace_id: trace, phase_id: "fetch", input: { query: "same", marker: ws } });
    const a = await invoke("tenant_a");
    const b = await invoke("tenant_b");
    const calls = await ctx.calls();
    const audit = await ctx.auditEvents();
    ctx.attach(audit, calls);
    if (a.status !== "completed" || b.status !== "completed") {
      ctx.skip(`the phase did not complete in both workspaces (${a.error?.code ?? a.status}, ${b.error?.code ?? b.status})`);
      return;
    }
    if (a.signature !== b.signature) ctx.note(`the two invocations have different signatures (${a.signature} vs ${b.signature}): isolation held by construction of the signature`);
    ctx.check("tenant_b got its own output, not tenant_a's cached one", (b.output as { marker?: unknown })?.marker === "tenant_b", "tenant_b", (b.output as { marker?: unknown })?.marker);
    const wrongCalls = calls.filter((c) => ((c.args as { node?: { id?: string } })?.node?.id ?? "").startsWith("seen-by-")).filter((c) => c.context.workspace_id !== (c.args as { node: { id: string } }).node.id.slice("seen-by-".length));
    ctx.check("every substrate call carries the workspace of the invocation that made it", wrongCalls.length === 0, 0, wrongCalls.length);
    const sideB = calls.some((c) => (c.args as { node?: { id?: string } })?.node?.id === "seen-by-tenant_b");
    ctx.check("tenant_b's phase ran its own side effect", sideB, true, sideB);
    const audits = audit.filter((e) => e.trace_id === trace);
    const crossed = audits.filter((e) => e.workspace_id !== "tenant_a" && e.workspace_id !== "tenant_b");
    ctx.check("audit events carry their own workspace", crossed.length === 0 && audits.some((e) => e.workspace_id === "tenant_a") && audits.some((e) => e.workspace_id === "tenant_b"), "tenant_a and tenant_b events", audits.map((e) => e.workspace_id));
  },
};

export const tracePropagation: ConformanceTest = {
  number: 11,
  name: "trace_id_propagates_to_substrates",
  summary: "three iterations at once with distinct trace ids (one per workspace): every substrate call and audit event of an iteration carries its trace id and no other",
  async run(ctx) {
    await ctx.configure();
    const loopId = await ctx.load(standardLoop("conformance.trace"), {
      fetch: { calls: [{ slot: "memory", operation: "retrieve_context", args: { query: "q" } }], delay_ms: 100, output: {} },
      apply: { calls: [{ slot: "memory", operation: "store_node", args: { node: { id: "node-$invocation" } } }], output: { causal_parent_ids: [] } },
    });
    const runs = [1, 2, 3].map((n) => ({ ws: `ws_trace_${n}`, trace: traceId(n, 11) }));
    await ctx.whileAdvancing(Promise.all(runs.map((r) => ctx.driver.call("iteration.run", { loop_id: loopId, workspace: r.ws, trace_id: r.trace, input: {} }))), 10_000);
    const calls = (await ctx.calls()).filter((c) => runs.some((r) => r.ws === c.context.workspace_id));
    if (calls.length === 0) {
      ctx.skip("no substrate call was made");
      return;
    }
    const wrong = calls.filter((c) => c.context.trace_id !== runs.find((r) => r.ws === c.context.workspace_id)!.trace);
    ctx.check("every substrate call carries its iteration's trace id", wrong.length === 0, 0, wrong.length === 0 ? 0 : wrong.slice(0, 3).map((c) => `${c.slot}.${c.operation} in ${c.context.workspace_id}: ${c.context.trace_id}`));
    const audit = (await ctx.auditEvents()).filter((e) => runs.some((r) => r.ws === e.workspace_id));
    const wrongAudit = audit.filter((e) => e.trace_id !== runs.find((r) => r.ws === e.workspace_id)!.trace);
    ctx.check("every audit event carries its iteration's trace id", wrongAudit.length === 0 && audit.length > 0, 0, wrongAudit.length);
    const each = runs.map((r) => calls.filter((c) => c.context.workspace_id === r.ws && c.slot === "memory").length);
    ctx.check("each iteration reached the memory substrate", each.every((n) => n > 0), "> 0 each", each);
    if (wrong.length > 0) ctx.attach(audit, wrong);
  },
};

/** Manifests the harness itself rejects, each breaking one thing; the valid one beside them is the near miss. */
function invalidCorpus(): { name: string; manifest: Record<string, unknown> }[] {
  const without = (key: string) => {
    const m = standardLoop("conformance.schema");
    delete m[key];
    return m;
  };
  const bad = (mutate: (m: Record<string, any>) => void) => {
    const m = standardLoop("conformance.schema") as Record<string, any>;
    mutate(m);
    return m;
  };
  return [
    { name: "no closure", manifest: without("closure") },
    { name: "no phases", manifest: bad((m) => (m.phases = [])) },
    { name: "a phase kind that does not exist", manifest: bad((m) => (m.phases[1].kind = "ponder")) },
    { name: "a loop_id that is not dotted lowercase", manifest: bad((m) => (m.loop_id = "Not A Loop")) },
    { name: "a closure from a phase that does not exist", manifest: bad((m) => (m.closure.from_phase = "nowhere")) },
    { name: "an unknown cadence type", manifest: bad((m) => (m.cadence = { type: "hourly" })) },
    { name: "a non-boolean invariant", manifest: bad((m) => (m.invariants.phase_atomicity = "yes")) },
  ];
}

export const manifestSchema: ConformanceTest = {
  number: 12,
  name: "manifest_validates_against_schema",
  summary: "valid manifests (the suite's and any given with --manifest) load; each of seven invalid ones is refused with MANIFEST_INVALID and the path of the violation",
  async run(ctx) {
    const valid: { name: string; manifest: Record<string, unknown> }[] = [{ name: "the suite's standard loop", manifest: standardLoop("conformance.schema") }];
    for (const m of ctx.manifests) valid.push({ name: m.file, manifest: m.value });
    const invalid = invalidCorpus();
    // The corpus is checked by the harness's own validator first, so a bad corpus never blames the runtime.
    for (const c of valid) if (!validateValue(c.manifest, c.name).valid) throw new Error(`conformance corpus: ${c.name} should be valid`);
    for (const c of invalid) if (validateValue(c.manifest, c.name).valid) throw new Error(`conformance corpus: "${c.name}" should be invalid`);
    for (const c of valid) {
      await ctx.configure();
      const loaded = await ctx.driver.call("manifest.load", { manifest: c.manifest }).then(
        (r) => r.loop_id,
        (e: unknown) => (e instanceof RuntimeError ? `refused: ${e.code} ${e.message}` : Promise.reject(e)),
      );
      ctx.check(`valid: ${c.name} loads`, loaded === c.manifest.loop_id, c.manifest.loop_id, loaded);
    }
    for (const c of invalid) {
      await ctx.configure();
      const outcome = await ctx.driver.call("manifest.load", { manifest: c.manifest }).then(
        (r) => ({ loaded: r.loop_id }) as const,
        (e: unknown) => (e instanceof RuntimeError ? ({ code: e.code, data: e.data } as const) : Promise.reject(e)),
      );
      const code = "code" in outcome ? outcome.code : undefined;
      const violations = "data" in outcome ? (outcome.data as { violations?: { pointer?: unknown }[] } | undefined)?.violations : undefined;
      const pointed = Array.isArray(violations) && violations.some((v) => typeof v.pointer === "string");
      ctx.check(`invalid (${c.name}): refused with MANIFEST_INVALID and a violation path`, code === "MANIFEST_INVALID" && pointed, "MANIFEST_INVALID with violations[].pointer", "loaded" in outcome ? "loaded" : `${code}${pointed ? " with a path" : " without a violation path"}`);
    }
  },
};
