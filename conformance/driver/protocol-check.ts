/**
 * `pulse-conform --validate-protocol`: every request the harness sends and every response the
 * adapter returns is checked against schema/conformance/driver/*.json, so an adapter author learns
 * "response to hello: /result/capabilities/clock must be one of virtual, real" instead of a
 * confusing test failure three calls later.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Ajv2020 } from "ajv/dist/2020.js";
import type { ErrorObject, ValidateFunction } from "ajv";
import { DriverFailure, type MessageCheck } from "./driver.js";
import { METHODS } from "./protocol.js";

const SCHEMA_DIR = join("schema", "conformance", "driver");
const ID_BASE = "https://opensentience.org/schemas/conformance/driver/";

interface Validators {
  request: ValidateFunction;
  response: ValidateFunction;
  params: Map<string, ValidateFunction>;
  result: Map<string, ValidateFunction>;
}

let compiled: Validators | undefined;

/**
 * The schemas ship next to dist/ (package.json "files"), not inside it, and this module runs from
 * conformance/driver (tests), dist/conformance/driver or an esbuild chunk under dist/bin: walk up
 * until the schema directory appears instead of assuming one depth.
 */
export function schemaDirectory(from: string = dirname(fileURLToPath(import.meta.url))): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, SCHEMA_DIR);
    if (existsSync(join(candidate, "envelope.json"))) return candidate;
    if (dirname(dir) === dir) throw new Error(`cannot find ${SCHEMA_DIR}/envelope.json above ${from}`);
  }
}

function validators(): Validators {
  if (compiled) return compiled;
  const dir = schemaDirectory();
  // allErrors: one look at a bad message should show everything wrong with it; verbose: the
  // offending value goes into the problem text.
  const ajv = new Ajv2020({ strict: true, allErrors: true, verbose: true });
  for (const name of ["envelope", ...METHODS]) ajv.addSchema(JSON.parse(readFileSync(join(dir, `${name}.json`), "utf8")) as object);
  const get = (ref: string): ValidateFunction => {
    const v = ajv.getSchema(ref);
    if (!v) throw new Error(`protocol schema ${ref} is missing`);
    return v;
  };
  compiled = {
    request: get(`${ID_BASE}envelope.json#/$defs/request`),
    response: get(`${ID_BASE}envelope.json#/$defs/response`),
    params: new Map(METHODS.map((m) => [m, get(`${ID_BASE}${m}.json#/$defs/params`)])),
    result: new Map(METHODS.map((m) => [m, get(`${ID_BASE}${m}.json#/$defs/result`)])),
  };
  return compiled;
}

function shown(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

function describeError(e: ErrorObject, base: string): string {
  const at = `${base}${e.instancePath}` || "/";
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case "enum":
      return `${at} must be one of ${(p.allowedValues as unknown[]).map((v) => (typeof v === "string" ? v : JSON.stringify(v))).join(", ")}; found ${shown(e.data)}`;
    case "const":
      return `${at} must be ${JSON.stringify(p.allowedValue)}; found ${shown(e.data)}`;
    case "additionalProperties":
      return `${at} has a member the protocol does not define: ${JSON.stringify(p.additionalProperty)}`;
    case "required":
      return `${at} must have the member ${JSON.stringify(p.missingProperty)}`;
    case "type":
    case "pattern":
    case "minimum":
    case "minLength":
      return `${at} ${e.message ?? "is invalid"}; found ${shown(e.data)}`;
    default:
      return `${at} ${e.message ?? "is invalid"}`;
  }
}

/**
 * Problems of one schema check, as readable lines. `if` only says "must match then", which the
 * `then` branch's own error already explains, so it is left out.
 */
function problemsOf(validate: ValidateFunction, value: unknown, base: string): string[] {
  if (validate(value)) return [];
  return (validate.errors ?? []).filter((e) => e.keyword !== "if").map((e) => describeError(e, base));
}

/**
 * A MessageCheck for the drivers (StdioDriver, HttpDriver, InProcessDriver take it as their
 * `check`). Each distinct problem is recorded once, prefixed with the message it was found in
 * ("response to configure: /result ..."), so a runtime that gets one thing wrong on every call
 * gets one line, not hundreds. With `strict`, the first message with a problem stops the run as
 * a DriverFailure (the adapter broke the protocol) instead.
 */
export function protocolChecker(options: { strict?: boolean } = {}): { check: MessageCheck; problems: string[] } {
  const v = validators();
  const problems: string[] = [];
  const seen = new Set<string>();
  const check: MessageCheck = (direction, method, message) => {
    const where = direction === "request" ? `request ${method}` : `response to ${method}`;
    const found: string[] = [];
    const known = (METHODS as readonly string[]).includes(method);
    if (direction === "request") {
      found.push(...problemsOf(v.request, message, ""));
      if (!known) found.push(`/method ${JSON.stringify(method)} is not a method of the driver protocol`);
      else if (isObject(message) && "params" in message) found.push(...problemsOf(v.params.get(method)!, message.params, "/params"));
    } else {
      found.push(...problemsOf(v.response, message, ""));
      if (known && isObject(message) && "result" in message && !("error" in message)) found.push(...problemsOf(v.result.get(method)!, message.result, "/result"));
    }
    if (found.length === 0) return;
    const lines = found.map((f) => `${where}: ${f}`);
    for (const line of lines) {
      if (seen.has(line)) continue;
      seen.add(line);
      problems.push(line);
    }
    // Strict throws on every bad message, seen before or not: over HTTP a session goes on after
    // one failed call, and a repeat must not slip through for having been deduplicated.
    if (options.strict) {
      // A bad request is the harness's own bug; say so rather than blame the adapter.
      const who = direction === "request" ? "the harness sent a message that breaks" : "the adapter broke";
      throw new DriverFailure(`${who} the driver protocol (--validate-protocol): ${lines.join("; ")}`);
    }
  };
  return { check, problems };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
