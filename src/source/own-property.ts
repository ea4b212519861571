/**
 * Assigns a parsed key as an own, enumerable data property. A plain `obj[key] = v` with the key
 * `__proto__` would replace the object's prototype instead: a manifest must never be able to
 * do that, and the schema should see (and reject) such a key like any other unknown one.
 */
export function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === "__proto__") {
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  } else {
    target[key] = value;
  }
}

/** Own-property lookup that never reaches into Object.prototype (`constructor`, `toString`, …). */
export function getOwn(target: unknown, key: string): unknown {
  if (target === null || typeof target !== "object") return undefined;
  return Object.prototype.hasOwnProperty.call(target, key) ? (target as Record<string, unknown>)[key] : undefined;
}
