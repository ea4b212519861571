/**
 * Defensive readers over a manifest that may be schema-invalid: semantic rules run even when
 * the schema fails, so every read tolerates a wrong type instead of throwing.
 *
 * Field names written in our code ("phases", "id", …) are read as plain properties, either
 * directly on an `asObject` result (the validator's hot paths: each read site stays
 * monomorphic) or through `field` and `str` (the diagram). Safe because Object.prototype has no
 * such property; tests check every read. A key that comes from the document itself must go
 * through getOwn instead.
 */
export type Json = Record<string, unknown>;

export function asObject(v: unknown): Json | undefined {
  return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Json) : undefined;
}

export function asArray(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

export function asString(v: unknown): string | undefined {
  return typeof v === "string" ? v : undefined;
}

export function field(obj: unknown, key: string): unknown {
  return obj !== null && typeof obj === "object" ? (obj as Json)[key] : undefined;
}

export function str(obj: unknown, key: string): string | undefined {
  const v = field(obj, key);
  return typeof v === "string" ? v : undefined;
}

/** Objects of an array field, with their index (non-objects skipped: the schema reports them). */
export function objectsOf(obj: unknown, key: string): { item: Json; index: number }[] {
  const list = field(obj, key);
  const out: { item: Json; index: number }[] = [];
  if (!Array.isArray(list)) return out;
  for (let index = 0; index < list.length; index++) {
    const item = asObject(list[index]);
    if (item) out.push({ item, index });
  }
  return out;
}
