/**
 * The session loop's profile (`profiles/coding/session.profile.json`, kept out of manifests/ so
 * directory searches for manifests never meet it): the settings a PULSE
 * manifest has no field for, keyed by phase id, validated against its own JSON Schema when it is
 * loaded. A wrong value is refused naming the field, never half-applied.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ErrorObject } from "ajv";
import { validateSessionProfile } from "../../validator/generated/session-profile.generated.js";
import { resolveLimits, type Limits } from "../limits.js";
import type { ChannelKind, ChannelSettings } from "../notify/channels.js";
import type { ContextStrategy } from "./records.js";

export const SESSION_LOOP_ID = "coding.pulse_session";

export interface SessionProfile {
  limits: Partial<Limits>;
  buildContext: { contextStrategy: ContextStrategy; prefetchTurns: number; semanticMinSalience: number; mcpServers?: Record<string, unknown> };
  /** Timeouts left out: the driver's own (a preset's timeoutMs / silenceTimeoutMs, else 15 and 5 minutes). */
  dispatch: { driver: string; model?: string; timeoutMs?: number; silenceTimeoutMs?: number; maxTurns?: number };
  extract: { allowInference: boolean; summaryChars: number; autoCommit: boolean };
  verify: { checks: string[]; each: boolean; maxRejections: number; timeoutMs: number };
  recordBranch: { controlPollMs: number };
  notify: {
    terminal: boolean;
    desktop: boolean;
    webhooks: string[];
    /** As --notify takes them (telegram:CHAT_ID, …); checked when a runner is built. */
    channels: string[];
    /** Channel kinds a REST/MCP start may name (default none). */
    allowFromRequests: ChannelKind[];
    timeoutMs?: number;
    retryDelaysMs?: number[];
  } & ChannelSettings;
}

export class ProfileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ProfileError";
  }
}

/** A file shipped with the package (`manifests/coding/session.yaml`), from src/, dist/src/ or a bundled bin alike. */
export function packageFile(relative: string): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, "package.json")) && existsSync(join(dir, "manifests", "coding"))) return join(dir, relative);
    const up = dirname(dir);
    if (up === dir) throw new ProfileError(`cannot find the pulse package around ${fileURLToPath(import.meta.url)} (looking for ${relative})`);
    dir = up;
  }
}

export const SESSION_MANIFEST = "manifests/coding/session.yaml";
export const SESSION_PROFILE = "profiles/coding/session.profile.json";

/** Compiled at build time (scripts/generate-validators.mjs) with the options it had at run time: all errors, no formats. */
const validate = validateSessionProfile as unknown as ((data: unknown) => boolean) & { errors?: ErrorObject[] | null };

/** Loads and validates a profile (the shipped one by default). */
export function loadSessionProfile(path: string = packageFile(SESSION_PROFILE)): SessionProfile {
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(path, "utf8"));
  } catch (e) {
    throw new ProfileError(`${path}: ${(e as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (e as Error).message}`);
  }
  return parseSessionProfile(value, path);
}

export function parseSessionProfile(value: unknown, where = "profile"): SessionProfile {
  if (!validate(value)) {
    const e = validate.errors![0]!;
    const field = e.instancePath || "/";
    const extra = e.keyword === "additionalProperties" ? ` (${JSON.stringify((e.params as { additionalProperty: string }).additionalProperty)} is not a setting of this loop)` : e.keyword === "enum" ? ` (one of ${(e.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(", ")})` : "";
    throw new ProfileError(`${where}: ${field} ${e.message}${extra}`);
  }
  const v = value as {
    limits?: Partial<Limits>;
    phases: { build_context?: Partial<SessionProfile["buildContext"]>; dispatch_agent?: Partial<SessionProfile["dispatch"]>; extract_evidence?: Partial<SessionProfile["extract"]>; record_branch?: Partial<SessionProfile["recordBranch"]> };
    notify?: Partial<SessionProfile["notify"]>;
    verify?: Partial<SessionProfile["verify"]>;
  };
  try {
    resolveLimits(v.limits ?? {});
  } catch (e) {
    throw new ProfileError(`${where}: ${(e as Error).message}`);
  }
  const p = v.phases;
  return {
    limits: v.limits ?? {},
    buildContext: { contextStrategy: "prefetch", prefetchTurns: 3, semanticMinSalience: 0.2, ...p.build_context },
    dispatch: { driver: "claude", ...p.dispatch_agent },
    extract: { allowInference: true, summaryChars: 160, autoCommit: true, ...p.extract_evidence },
    verify: { checks: [], each: false, maxRejections: 2, timeoutMs: 600_000, ...v.verify },
    recordBranch: { controlPollMs: 250, ...p.record_branch },
    notify: { terminal: true, desktop: false, webhooks: [], channels: [], allowFromRequests: [], ...v.notify },
  };
}

