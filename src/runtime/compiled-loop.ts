/**
 * A validated manifest compiled into what the runtime executes: phases with their parsed recipe,
 * failure directive and route targets; the entry and closure; the invariants in force. Built once
 * per loop, read on every phase.
 */
import { parseSignatureRecipe, type SignatureRecipe } from "../grammar/signature-recipe.js";
import type { Expr } from "../grammar/expression/index.js";
import type { Connection, InnerLoop, Manifest, Phase } from "../manifest/types.js";
import { resolveLoop } from "../validator/resolver.js";
import { toPointer } from "../source/source-node.js";
import type { InvariantName } from "./errors.js";

export type FailureDirective = "retry" | "rollback" | "escalate" | "skip" | "abort_loop";

export interface CompiledPhase {
  id: string;
  index: number;
  kind: string;
  /** custom_kind for custom phases, else kind: what events and telemetry call the phase. */
  label: string;
  phase: Phase;
  idempotent: boolean;
  recipe: SignatureRecipe | undefined;
  timeoutMs: number | undefined;
  onFailure: FailureDirective | undefined;
  maxRetries: number;
  parallel: boolean;
  /** Phases a route phase may redirect to (the phase: endpoints of its outputs.to). */
  routeTargets: string[];
  /** The phase that follows in declared order, unless this phase closes the iteration. */
  next: string | undefined;
}

export interface CompiledInnerLoop {
  loopId: string;
  phase: string;
  condition: Expr | undefined;
  wait: InnerLoop["wait"];
  timeoutMs: number | undefined;
}

export interface CompiledConnection {
  connection: Connection;
  condition: Expr | undefined;
}

export interface CompiledLoop {
  manifest: Manifest;
  loopId: string;
  phases: CompiledPhase[];
  byId: Map<string, CompiledPhase>;
  /** First iteration starts here (phases[0]); later ones at closure.to_phase (decisions.md). */
  entry: string;
  reentry: string;
  closureFrom: string;
  invariants: Record<Exclude<InvariantName, "feedback_path">, boolean>;
  innerLoops: CompiledInnerLoop[];
  connections: CompiledConnection[];
}

/** Retries when a phase says `on_failure: retry` without `max_retries`. */
export const DEFAULT_MAX_RETRIES = 3;

export function compileLoop(manifest: Manifest): CompiledLoop {
  const model = resolveLoop(manifest);
  const closureFrom = manifest.closure.from_phase;
  const phases: CompiledPhase[] = manifest.phases.map((phase, index) => {
    const recipe = phase.signature ? parseSignatureRecipe(phase.signature) : undefined;
    const routeTargets = model.endpoints
      .filter((e) => toPointer(e.path) === `/phases/${index}/outputs/to`)
      .flatMap((e) => e.refs.flatMap((r) => (r.kind === "phase" ? [r.phase] : [])));
    const onFailure = phase.on_failure as FailureDirective | undefined;
    return {
      id: phase.id,
      index,
      kind: phase.kind,
      label: phase.kind === "custom" ? (phase.custom_kind ?? "custom") : phase.kind,
      phase,
      idempotent: phase.idempotent === true,
      recipe: recipe?.ok ? recipe.value : undefined,
      timeoutMs: typeof phase.timeout_ms === "number" && phase.timeout_ms > 0 ? phase.timeout_ms : undefined,
      onFailure,
      maxRetries: onFailure === "retry" ? (phase.max_retries ?? DEFAULT_MAX_RETRIES) : 0,
      parallel: phase.parallel === true,
      routeTargets: phase.kind === "route" ? routeTargets : [],
      next: phase.id === closureFrom ? undefined : manifest.phases[index + 1]?.id,
    };
  });
  const inv = manifest.invariants ?? {};
  const innerLoops: CompiledInnerLoop[] = (manifest.nesting?.inner_loops ?? []).map((inner, i) => {
    const trigger = model.triggers.find((t) => toPointer(t.path) === `/nesting/inner_loops/${i}/trigger`);
    return { loopId: inner.loop_id, phase: trigger?.phase ?? "", condition: trigger?.condition, wait: inner.wait, timeoutMs: inner.timeout_ms };
  });
  const connections: CompiledConnection[] = (manifest.connections ?? []).map((connection, i) => ({
    connection,
    condition: model.conditions.find((c) => toPointer(c.path) === `/connections/${i}/emit_condition`)?.expr,
  }));
  return {
    manifest,
    loopId: manifest.loop_id,
    phases,
    byId: new Map(phases.map((p) => [p.id, p])),
    entry: (phases[0] as CompiledPhase).id,
    reentry: manifest.closure.to_phase,
    closureFrom,
    invariants: {
      phase_atomicity: inv.phase_atomicity === true,
      feedback_immutability: inv.feedback_immutability === true,
      append_only_audit: inv.append_only_audit === true,
      kappa_routing: inv.kappa_routing === true,
      quorum_before_commit: inv.quorum_before_commit === true,
      outcome_grounding: inv.outcome_grounding === true,
      trace_id_propagation: inv.trace_id_propagation === true,
    },
    innerLoops,
    connections,
  };
}
