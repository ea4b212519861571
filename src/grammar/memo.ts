/**
 * A bounded memo for the grammar parsers. The same strings recur constantly ("substrate:memory",
 * a loop's conditions on every reload, every manifest of a system), and results are never
 * mutated by callers, so one parse per distinct string is enough. Bounded so that a stream of
 * unique inputs cannot grow memory: the oldest entry is evicted first.
 */
export function memoize<T>(parse: (text: string) => T, limit = 1024): (text: string) => T {
  const cache = new Map<string, T>();
  return (text: string): T => {
    const hit = cache.get(text);
    if (hit !== undefined) return hit;
    const value = deepFreeze(parse(text));
    // Long inputs are rare and unlikely to repeat; do not let them crowd out the common ones.
    if (text.length <= 256) {
      if (cache.size >= limit) cache.delete(cache.keys().next().value as string);
      cache.set(text, value);
    }
    return value;
  };
}

/**
 * Cached results are shared between callers: freezing their objects makes an accidental
 * mutation throw. Arrays are typed readonly instead of frozen: V8 iterates a frozen array
 * several times slower, and the runtime walks these (expression paths, endpoint lists) on
 * every signal.
 */
function deepFreeze<T>(value: T): T {
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) {
    for (const v of value) deepFreeze(v);
  } else if (!Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}
