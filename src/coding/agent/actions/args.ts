/**
 * An action's arguments checked against its `meta.json` before anything runs: unknown names,
 * missing required ones and wrong types are an error result, never a crash or a started process.
 */
import type { ActionSpec } from "../types.js";

function typeOf(v: unknown): string {
  if (Array.isArray(v)) return "array";
  if (v === null) return "null";
  if (typeof v === "number") return Number.isInteger(v) ? "integer" : "number";
  return typeof v;
}

export function validateArgs(spec: Pick<ActionSpec, "name" | "arguments">, args: unknown): string[] {
  if (!args || typeof args !== "object" || Array.isArray(args)) return [`arguments of ${spec.name} must be an object, got ${typeOf(args)}`];
  const given = args as Record<string, unknown>;
  const errors: string[] = [];
  const declared = new Map(spec.arguments.map((a) => [a.name, a]));
  for (const name of Object.keys(given)) if (!declared.has(name)) errors.push(`${name}: ${spec.name} takes no such argument (it takes ${spec.arguments.map((a) => a.name).join(", ") || "none"})`);
  for (const a of spec.arguments) {
    const v = given[a.name];
    if (v === undefined) {
      if (a.required) errors.push(`${a.name}: required`);
      continue;
    }
    const t = typeOf(v);
    const ok = a.type === t || (a.type === "number" && t === "integer");
    if (!ok) errors.push(`${a.name}: must be ${a.type}, got ${t}`);
  }
  return errors;
}
