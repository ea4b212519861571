/**
 * Our runtime behind the driver protocol: the in-process adapter, and (wrapped in stdio.ts) the
 * subprocess adapter that proves the protocol end to end. Each `configure` starts a fresh host,
 * so every conformance test begins from nothing.
 */
import { createHost, type Host } from "../../../src/host/index.js";
import { ManifestRejectedError, PulseError, systemClock, VirtualClock, type Clock } from "../../../src/runtime/index.js";
import { isMutantName, MUTANTS, withMutant } from "../../../src/runtime/mutants.js";
import type { SubstrateSet } from "../../../src/substrates/contracts.js";
import { httpSubstrates } from "../../../adapters/http/client.js";
import { inMemorySubstrates } from "../../../adapters/memory/index.js";
import { withFaults, type FaultInjector } from "../../../adapters/testing/faults.js";
import { wrapSubstrates } from "../../../adapters/testing/wrap.js";
import { VERSION } from "../../../src/version.js";
import type { ConfigureParams, Methods, ObservedCall, PhaseScript, WireError } from "../../driver/protocol.js";
import { PROTOCOL_VERSION } from "../../driver/protocol.js";
import { runtimeArtifactDigest } from "./artifact-digest.js";
import { scriptedHandler } from "./script.js";

/** A runtime answer that is an error the harness asserts on (JSON-RPC error with data.code). */
export class AdapterError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly data?: Record<string, unknown>,
  ) {
    super(message);
  }
}

interface Session {
  host: Host;
  clock: Clock;
  virtual: VirtualClock | undefined;
  substrates: SubstrateSet;
  faults: FaultInjector | undefined;
  calls: ObservedCall[];
  counters: Map<string, number>;
}

export class PulseAdapter {
  private session: Session | undefined;

  async handle(method: string, params: unknown): Promise<unknown> {
    const p = (params ?? {}) as Record<string, unknown>;
    switch (method) {
      case "hello":
        return this.hello();
      case "configure":
        return this.configure(p as unknown as ConfigureParams);
      case "manifest.load":
        return this.load(p as unknown as Methods["manifest.load"][0]);
      case "iteration.run":
        return this.iteration(p as unknown as Methods["iteration.run"][0]);
      case "phase.invoke":
        return this.invoke(p as unknown as Methods["phase.invoke"][0]);
      case "clock.advance":
        return this.advance(p as unknown as Methods["clock.advance"][0]);
      case "status.get":
        return this.status(p as unknown as Methods["status.get"][0]);
      case "fault.inject":
        this.faults().fail(slotOf(p.slot), "unavailable");
        return {};
      case "fault.heal":
        this.faults().heal(slotOf(p.slot));
        return {};
      case "calls.read": {
        const since = typeof p.since === "number" ? p.since : 0;
        const calls = this.current().calls;
        return { calls: calls.slice(since), next: calls.length };
      }
      case "shutdown":
        await this.session?.host.stop();
        this.session = undefined;
        return {};
      default:
        throw new AdapterError("METHOD_NOT_FOUND", `no method ${method}`);
    }
  }

  hello(): Methods["hello"][1] {
    // The built files that run (artifact-digest.ts): what the report and attestation name.
    const digest = runtimeArtifactDigest();
    return {
      protocol_version: PROTOCOL_VERSION,
      runtime: { name: "pulse", version: VERSION, language: "typescript", ...(digest ? { digest } : {}) },
      capabilities: { clock: "virtual", substrates: ["rebind", "fault-injection"], mutants: Object.keys(MUTANTS) },
    };
  }

  private async configure(p: ConfigureParams): Promise<Record<string, never>> {
    await this.session?.host.stop();
    if (p.mutant !== undefined && !isMutantName(p.mutant)) throw new AdapterError("BAD_PARAMS", `unknown mutant ${p.mutant}`);
    const virtual = p.clock === "virtual" ? new VirtualClock(Date.UTC(2026, 0, 1)) : undefined;
    const clock = virtual ?? systemClock;
    const calls: ObservedCall[] = [];
    let substrates: SubstrateSet;
    let faults: FaultInjector | undefined;
    if (p.substrate_url) {
      substrates = httpSubstrates(p.substrate_url);
    } else {
      // Our own substrates, observed and faulted from inside (evidence class driver-fault-injection).
      faults = withFaults(inMemorySubstrates());
      substrates = wrapSubstrates(faults.substrates, async (slot, operation, args, ctx, proceed) => {
        const call: ObservedCall = { slot, operation, args, context: { trace_id: ctx.trace_id, workspace_id: ctx.workspace_id, ...(ctx.tx_id ? { tx_id: ctx.tx_id } : {}) }, at: clock.now() };
        calls.push(call);
        try {
          return await proceed();
        } catch (e) {
          call.error = (e as Error).message;
          throw e;
        }
      });
    }
    // Loop time stands still while a substrate call is on the wire (clock.ts, VirtualClock.track):
    // a phase that sleeps after an HTTP call must find its timer still ahead, not already skipped.
    if (virtual) substrates = wrapSubstrates(substrates, (_slot, _operation, _args, _ctx, proceed) => virtual.track(proceed()));
    // Mutants are switched on through the runtime's internal entry, never its public options.
    const options = {
      clock,
      ...(p.circuit ? { circuit: { failureThreshold: p.circuit.failure_threshold, cooldownMs: p.circuit.cooldown_ms } } : {}),
      onEscalation: () => undefined,
    };
    const host = await createHost(withMutant(options, p.mutant !== undefined && isMutantName(p.mutant) ? p.mutant : undefined));
    host.start();
    this.session = { host, clock, virtual, substrates, faults, calls, counters: new Map() };
    return {};
  }

  private current(): Session {
    if (!this.session) throw new AdapterError("NOT_CONFIGURED", "call configure first");
    return this.session;
  }

  private faults(): FaultInjector {
    const f = this.current().faults;
    if (!f) throw new AdapterError("UNSUPPORTED", "fault injection works on the runtime's own substrates (configure with substrate_url null)");
    return f;
  }

  private async load(p: Methods["manifest.load"][0]): Promise<Methods["manifest.load"][1]> {
    const s = this.current();
    try {
      const loop = await s.host.load(p.manifest, { substrates: s.substrates });
      for (const phase of loop.compiled.phases) {
        const script: PhaseScript = p.scripts?.[phase.id] ?? { output: phase.kind === "act" ? { causal_parent_ids: [] } : {} };
        loop.handle(phase.id, scriptedHandler(script, s.counters));
      }
      return { loop_id: loop.id };
    } catch (e) {
      if (e instanceof ManifestRejectedError) {
        throw new AdapterError("MANIFEST_INVALID", e.message, {
          violations: e.diagnostics.filter((d) => d.severity === "error").map((d) => ({ pointer: d.pointer, message: d.message, rule: d.rule })),
        });
      }
      throw e;
    }
  }

  private loop(loopId: string) {
    const loop = this.current().host.loop(loopId);
    if (!loop) throw new AdapterError("NOT_FOUND", `no loop ${loopId} is loaded`);
    return loop;
  }

  private async iteration(p: Methods["iteration.run"][0]): Promise<Methods["iteration.run"][1]> {
    this.loop(p.loop_id); // NOT_FOUND before anything runs
    const r = await this.current().host.trigger(p.loop_id, { workspace: p.workspace, input: p.input, ...(p.trace_id ? { traceId: p.trace_id } : {}) });
    const result: Methods["iteration.run"][1] = {
      trace_id: r.trace_id,
      status: r.status,
      closed: r.closed,
      phases: r.phases.map((ph) => ({
        phase_id: ph.phase_id,
        status: ph.status === "replayed" ? "completed" : ph.status,
        signature: ph.signature,
        replayed: ph.status === "replayed",
        ...(ph.error ? { error: wire(ph.error) } : {}),
      })),
    };
    if (r.error) result.error = wire(r.error);
    return result;
  }

  private async invoke(p: Methods["phase.invoke"][0]): Promise<Methods["phase.invoke"][1]> {
    const loop = this.loop(p.loop_id);
    const { outcome } = await loop.invokePhase(p.phase_id, { workspace: p.workspace, traceId: p.trace_id, input: p.input });
    if (outcome.kind === "completed") return { status: "completed", output: outcome.output, signature: outcome.signature, replayed: outcome.replayed };
    return { status: "failed", signature: outcome.signature, error: wire(outcome.error) };
  }

  private async advance(p: Methods["clock.advance"][0]): Promise<Methods["clock.advance"][1]> {
    const s = this.current();
    if (!s.virtual) throw new AdapterError("UNSUPPORTED", "the clock is real (configure with clock virtual)");
    if (!(typeof p.ms === "number" && p.ms >= 0)) throw new AdapterError("BAD_PARAMS", "ms must be a number ≥ 0");
    await s.virtual.advance(p.ms);
    return { now: s.virtual.now() };
  }

  private status(p: Methods["status.get"][0]): Methods["status.get"][1] {
    const loop = this.loop(p.loop_id);
    const circuits: Record<string, "closed" | "open" | "half_open"> = {};
    for (const slot of ["memory", "policy", "audit", "auth", "time"] as const) {
      const state = loop.circuit(slot);
      if (state) circuits[slot] = state;
    }
    return { status: loop.status(), circuits };
  }
}

/** The protocol's error is closed (code, message, data): anything more the runtime says (the invariant and spec section of a refusal) travels as data. */
function wire(e: { code: string; message: string }): WireError {
  const { code, message, ...rest } = e as { code: string; message: string } & Record<string, unknown>;
  return Object.keys(rest).length > 0 ? { code, message, data: rest } : { code, message };
}

function slotOf(value: unknown): "memory" | "policy" | "audit" | "auth" | "time" {
  if (value === "memory" || value === "policy" || value === "audit" || value === "auth" || value === "time") return value;
  throw new AdapterError("BAD_PARAMS", `no substrate slot ${String(value)}`);
}

/** Maps anything thrown by the runtime to the protocol's error (code, message, data). */
export function errorOf(e: unknown): { code: string; message: string; data?: Record<string, unknown> } {
  if (e instanceof AdapterError) return { code: e.code, message: e.message, ...(e.data ? { data: e.data } : {}) };
  if (e instanceof PulseError) return { code: e.code, message: e.message };
  return { code: "INTERNAL", message: (e as Error)?.message ?? String(e) };
}
