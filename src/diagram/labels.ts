/**
 * The words a diagram shows. Manifest text is normalised here (whitespace runs become one space,
 * control characters and lone surrogates go, bidi controls are marked, long text is cut), so
 * that a "\n" in a label is always a line break the diagram chose; the emitters only escape.
 */
import { parseDurationCached as parseDuration } from "../grammar/cached.js";
import { formatDuration } from "../grammar/duration.js";
import { printExpression, type Expr } from "../grammar/expression/index.js";
import { field, str } from "../validator/access.js";
import { markBidi } from "./escape.js";

const MAX_TEXT = 96;

export function clean(text: unknown, max = MAX_TEXT): string {
  if (typeof text !== "string") return "";
  // C0/C1 controls become spaces; bidi controls a visible U+FFFD (why: see markBidi).
  const flat = markBidi(text)
    .replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\s]+/g, " ")
    .replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, "\ufffd")
    .trim();
  const chars = Array.from(flat);
  return chars.length > max ? `${chars.slice(0, max - 3).join("")}...` : flat;
}

/** A name on a line of its own: never an empty line, which Graphviz would drop. */
export function shown(text: unknown): string {
  return clean(text) || "(empty)";
}

/** A loop's cluster title: its id, then its name when it has one. */
export function loopTitle(loopId: string, name: string | undefined): string {
  const n = clean(name);
  return n ? `${shown(loopId)}\n${n}` : shown(loopId);
}

/** Canonical kinds by name; a custom kind by its custom_kind (§3.2), "custom" when it has none. */
export function kindText(kind: string | undefined, customKind: string | undefined): string {
  if (kind === "custom") return clean(customKind) ? `custom: ${clean(customKind)}` : "custom";
  return clean(kind) || "unknown kind";
}

export function closureLabel(via: string | undefined, guarantee: string | undefined): string {
  const v = clean(via);
  const g = clean(guarantee);
  return `closure${v ? ` via ${v}` : ""}${g ? ` (${g})` : ""}`;
}

/** §10.2: at_least_once is the default delivery. */
export function deliveryOf(connection: unknown): string {
  return clean(str(connection, "delivery")) || "at_least_once";
}

export function connectionLabel(connection: unknown): string {
  const token = clean(str(connection, "token")) || "signal";
  return `${token} \u00b7 ${deliveryOf(connection)}`;
}

export function nestingLabel(condition: Expr | undefined, wait: string | undefined, timeoutMs: unknown): string | null {
  const parts: string[] = [];
  if (condition) parts.push(`when ${clean(printExpression(condition))}`);
  const w = waitText(wait, timeoutMs);
  if (w) parts.push(w);
  return parts.length ? parts.join(" \u00b7 ") : null;
}

export function waitText(wait: string | undefined, timeoutMs: unknown): string | null {
  const w = clean(wait);
  if (!w) return null;
  return w === "bounded" && typeof timeoutMs === "number" && Number.isFinite(timeoutMs) ? `bounded ${formatDuration(timeoutMs)}` : w;
}

function durationText(value: unknown): string {
  if (typeof value === "number" && Number.isFinite(value)) return formatDuration(value);
  if (typeof value !== "string") return "";
  const parsed = parseDuration(value);
  // Words (weekly) and ISO-8601 read better as written; plain units are normalised (90s → 1m30s).
  return parsed.ok && /^\d+(ms|s|m|h|d|w)$/.test(value.trim()) ? formatDuration(parsed.value) : clean(value);
}

/** One line per cadence primitive (§8), ASCII only. */
export function cadenceText(cadence: unknown): string {
  const type = clean(str(cadence, "type")) || "cadence";
  const params = field(cadence, "params");
  const p = (key: "trigger" | "stream" | "interface" | "from_loop" | "from_phase" | "token" | "filter" | "rate_limit"): string => clean(str(params, key));
  switch (type) {
    case "event": {
      const filter = p("filter");
      return `event: ${p("trigger") || "?"}${filter ? ` if ${filter}` : ""}`;
    }
    case "periodic": {
      const interval = durationText(field(params, "interval"));
      return /^[a-z]+ly$/.test(interval) ? `periodic: ${interval}` : `periodic: every ${interval || "?"}`;
    }
    case "streaming":
      return `streaming: ${p("stream") || "?"}`;
    case "idle": {
      const idle = durationText(field(params, "min_idle_ms"));
      return `idle: after ${idle || "?"}`;
    }
    case "cross_loop_signal": {
      const from = [p("from_loop"), p("from_phase")].filter(Boolean).join("/");
      return `signal: ${p("token") || "any"} from ${from || "?"}`;
    }
    case "manual": {
      const rate = p("rate_limit");
      return `manual${p("interface") ? `: ${p("interface")}` : ""}${rate ? `, at most ${rate}` : ""}`;
    }
    default:
      return type;
  }
}
