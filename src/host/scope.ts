/**
 * What the expressions of a manifest read (docs/expressions.md): an inner-loop trigger condition
 * (`kappa > 0`) and a connection's `emit_condition` (`status in ['success','failure']`) are
 * evaluated against the phase that just ran. Its output's fields come first, then its input's,
 * then `kappa` (max_kappa of the latest TopologyContext the iteration saw), and the whole
 * `output`, `input` and `tokens` (by name) for explicit paths.
 */
import type { Token } from "../tokens/types.js";

function fields(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

export function phaseScope(input: unknown, output: unknown, tokens: readonly Token[]): Record<string, unknown> {
  const byName: Record<string, Token> = {};
  for (const t of tokens) byName[t.token] = t;
  const topology = byName.TopologyContext as { max_kappa?: number } | undefined;
  const scope: Record<string, unknown> = Object.create(null);
  Object.assign(scope, fields(input), fields(output));
  if (topology && typeof topology.max_kappa === "number") scope.kappa = topology.max_kappa;
  scope.input = input;
  scope.output = output;
  scope.tokens = byName;
  return scope;
}
