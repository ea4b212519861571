/**
 * Turns ajv's errors into findings a person can act on: unknown keys pointed at the key with
 * the nearest valid name, missing properties grouped per object, enum values with "did you
 * mean", `if`/`then` noise dropped, and a protocol version that is too new named as such (§16).
 */
import type { ErrorObject } from "ajv";
import { SUPPORTED_PROTOCOL_VERSION } from "../manifest/types.js";
import type { Finding } from "./finding.js";
import { closest, didYouMean } from "../grammar/suggest.js";
import { childPath, pointerSegments, toPointer } from "../source/source-node.js";

const PATTERN_TEXT: Record<string, string> = {
  "^0\\.1(\\.[0-9]+)?$": 'a PULSE protocol version such as "0.1" or "0.1.1"',
  "^[a-z0-9_]+(\\.[a-z0-9_]+)+$": 'a dotted lowercase loop id such as "myorg.my_loop" (a-z, 0-9, _, at least one dot)',
  "^[0-9]+\\.[0-9]+\\.[0-9]+$": 'a MAJOR.MINOR.PATCH version such as "1.0.0"',
  "^(0|[1-9][0-9]*)\\.(0|[1-9][0-9]*)\\.(0|[1-9][0-9]*)$": 'a MAJOR.MINOR.PATCH version such as "1.0.0"',
  "^[a-z0-9_]+$": 'an id of lowercase letters, digits and _ such as "retrieve_ctx"',
};

/** `/phases/2/timeout_ms` → `phases[2].timeout_ms`: how people name places in a manifest. */
export function describePointer(pointer: string): string {
  let out = "";
  for (const seg of pointerSegments(pointer)) {
    if (/^(0|[1-9][0-9]*)$/.test(seg)) out += `[${seg}]`;
    else out += (out === "" ? "" : ".") + seg;
  }
  return out === "" ? "the manifest" : out;
}

function describeValue(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  if (typeof v === "object") return "an object";
  if (typeof v === "string") return `the string ${JSON.stringify(v.length > 40 ? v.slice(0, 37) + "..." : v)}`;
  return `${typeof v} ${String(v)}`;
}

const TYPE_TEXT: Record<string, string> = {
  string: "a string",
  integer: "an integer",
  number: "a number",
  boolean: "true or false",
  object: "an object",
  array: "an array",
  null: "null",
};

function valueAt(root: unknown, pointer: string): unknown {
  let v = root;
  for (const seg of pointerSegments(pointer)) {
    if (v === null || typeof v !== "object" || !Object.hasOwn(v, seg)) return undefined;
    v = (v as Record<string, unknown>)[seg];
  }
  return v;
}

export function schemaFindings(errors: readonly ErrorObject[], document: unknown): Finding[] {
  if (errors.length === 0) return [];
  const findings: Finding[] = [];
  const missing = new Map<string, { props: string[]; conditional: boolean }>();
  const seen = new Set<string>();
  const push = (f: Finding): void => {
    const key = `${f.rule}\u0000${toPointer(f.path)}\u0000${f.message}`;
    if (!seen.has(key)) {
      seen.add(key);
      findings.push(f);
    }
  };

  for (const e of errors) {
    const at = e.instancePath;
    const path = pointerSegments(at);
    const where = describePointer(at);
    const value = valueAt(document, at);
    switch (e.keyword) {
      case "if":
        break; // the failing `then` branch reports the actual problem
      case "required": {
        const prop = (e.params as { missingProperty: string }).missingProperty;
        const group = missing.get(at) ?? { props: [], conditional: false };
        if (!group.props.includes(prop)) group.props.push(prop);
        if (e.schemaPath.includes("/then/")) group.conditional = true;
        missing.set(at, group);
        break;
      }
      case "additionalProperties": {
        const prop = (e.params as { additionalProperty: string }).additionalProperty;
        const allowed = Object.keys((e.parentSchema as { properties?: object } | undefined)?.properties ?? {});
        const f: Finding = {
          rule: "schema/unknown-property",
          path: childPath(path, prop),
          key: true,
          message: `unknown property "${prop}" in ${where}`,
        };
        const suggestion = didYouMean(closest(prop, allowed));
        if (suggestion) f.suggestion = suggestion;
        else if (allowed.length > 0) f.suggestion = `allowed here: ${allowed.join(", ")}`;
        push(f);
        break;
      }
      case "enum": {
        const allowed = ((e.params as { allowedValues: unknown[] }).allowedValues ?? []).map(String);
        const f: Finding = { rule: "schema/enum", path, message: `${where} must be one of ${allowed.join(", ")}; found ${describeValue(value)}` };
        const suggestion = typeof value === "string" ? didYouMean(closest(value, allowed)) : undefined;
        push(suggestion ? { ...f, suggestion } : f);
        break;
      }
      case "const": {
        const allowed = (e.params as { allowedValue: unknown }).allowedValue;
        push({ rule: "schema/enum", path, message: `${where} must be ${JSON.stringify(allowed)}; found ${describeValue(value)}` });
        break;
      }
      case "type": {
        const types = String((e.params as { type: string | string[] }).type).split(",");
        const want = types.map((t) => TYPE_TEXT[t] ?? t).join(" or ");
        const f: Finding = { rule: "schema/type", path, message: `${where} must be ${want}; found ${describeValue(value)}` };
        if (typeof value === "string" && (types.includes("integer") || types.includes("number")) && /^-?\d+(\.\d+)?$/.test(value.trim())) {
          f.suggestion = `write ${value.trim()} without quotes`;
        } else if (typeof value === "string" && types.includes("boolean") && /^(true|false)$/i.test(value.trim())) {
          f.suggestion = `write ${value.trim().toLowerCase()} without quotes`;
        }
        push(f);
        break;
      }
      case "pattern": {
        const version = at === "/pulse_protocol_version" ? versionFinding(value) : undefined;
        if (version) {
          push(version);
          break;
        }
        const pattern = (e.params as { pattern: string }).pattern;
        push({ rule: "schema/pattern", path, message: `${where} must be ${PATTERN_TEXT[pattern] ?? `text matching /${pattern}/`}; found ${describeValue(value)}` });
        break;
      }
      case "minItems":
      case "maxItems": {
        const limit = (e.params as { limit: number }).limit;
        const count = Array.isArray(value) ? value.length : 0;
        const bound = e.keyword === "minItems" ? "at least" : "at most";
        const noun = at === "/phases" ? "phase" : "item";
        push({ rule: "schema/items", path, key: true, message: `${where} must have ${bound} ${limit} ${noun}${limit === 1 ? "" : "s"}; found ${count}` });
        break;
      }
      case "minimum":
      case "maximum":
      case "exclusiveMinimum":
      case "exclusiveMaximum": {
        const p = e.params as { comparison: string; limit: number };
        push({ rule: "schema/range", path, message: `${where} must be ${p.comparison} ${p.limit}; found ${describeValue(value)}` });
        break;
      }
      case "minLength":
      case "maxLength": {
        const limit = (e.params as { limit: number }).limit;
        push({
          rule: "schema/length",
          path,
          message: limit === 1 && e.keyword === "minLength" ? `${where} must not be empty` : `${where} must be ${e.keyword === "minLength" ? "at least" : "at most"} ${limit} characters long`,
        });
        break;
      }
      case "format":
        push({ rule: "schema/format", path, message: `${where} must be a valid ${(e.params as { format: string }).format}; found ${describeValue(value)}` });
        break;
      default:
        push({ rule: "schema/invalid", path, message: `${where} ${e.message ?? "is invalid"}` });
    }
  }

  for (const [at, { props, conditional }] of missing) {
    const list = props.map((p) => `"${p}"`).join(", ");
    const where = describePointer(at);
    const reason = conditional && props.includes("custom_kind") ? ' (required when kind is "custom")' : "";
    findings.push({
      rule: "schema/required",
      path: pointerSegments(at),
      key: true,
      message: `${where} is missing required propert${props.length === 1 ? "y" : "ies"} ${list}${reason}`,
    });
  }
  return findings;
}

/** §16: a higher minor (or major) version than we support is refused by name, not as a pattern. */
function versionFinding(value: unknown): Finding | undefined {
  if (typeof value !== "string") return undefined;
  const m = /^(\d+)\.(\d+)(?:\.(\d+))?$/.exec(value.trim());
  if (!m) return undefined;
  const [supMajor, supMinor] = SUPPORTED_PROTOCOL_VERSION.split(".").map(Number) as [number, number];
  const major = Number(m[1]);
  const minor = Number(m[2]);
  if (major < supMajor || (major === supMajor && minor <= supMinor)) return undefined;
  return {
    rule: "pulse/version-unsupported",
    path: ["pulse_protocol_version"],
    message: `the manifest declares PULSE ${value}, but this validator supports PULSE ${SUPPORTED_PROTOCOL_VERSION} (§16: a newer minor version may use fields this version cannot check)`,
    suggestion: `upgrade pulse, or declare "${SUPPORTED_PROTOCOL_VERSION}" if the manifest uses only ${SUPPORTED_PROTOCOL_VERSION} features`,
  };
}
