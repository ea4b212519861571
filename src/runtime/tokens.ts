/**
 * Tokens (§6) where they enter the runtime: phase inputs and outputs that carry a `token` field,
 * and tokens substrates return. Each is validated against schema/tokens (compiled at build time)
 * and remembered for the rest of the iteration, where the invariants read them: κ-routing looks
 * for the latest TopologyContext, quorum-before-commit for the latest DeliberationResult.
 */
import type { ErrorObject } from "ajv";
import * as validators from "../validator/generated/token-validators.generated.js";
import { TOKEN_NAMES, type TokenName } from "../manifest/types.js";
import type { Token } from "../tokens/types.js";
import { TokenInvalidError } from "./errors.js";

type Validator = ((data: unknown) => boolean) & { errors?: ErrorObject[] | null };

const VALIDATORS: Record<TokenName, Validator> = {
  TopologyContext: validators.validateTopologyContext as unknown as Validator,
  DeliberationResult: validators.validateDeliberationResult as unknown as Validator,
  OutcomeSignal: validators.validateOutcomeSignal as unknown as Validator,
  ReputationUpdate: validators.validateReputationUpdate as unknown as Validator,
  ConsolidationEvent: validators.validateConsolidationEvent as unknown as Validator,
  SurpriseSignal: validators.validateSurpriseSignal as unknown as Validator,
};

export const validateEnvelope = validators.validateCloudeventsEnvelope as unknown as Validator;

const NAMES = new Set<string>(TOKEN_NAMES);

export function isTokenName(name: unknown): name is TokenName {
  return typeof name === "string" && NAMES.has(name);
}

/** The token a value claims to be, if it claims to be one. */
export function claimedToken(value: unknown): TokenName | undefined {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return undefined;
  const name = (value as { token?: unknown }).token;
  return isTokenName(name) ? name : undefined;
}

export function describeErrors(errors: readonly ErrorObject[] | null | undefined): string {
  return (errors ?? [])
    .slice(0, 3)
    .map((e) => `${e.instancePath || "/"} ${e.message ?? "is invalid"}`)
    .join("; ");
}

/** Throws TokenInvalidError unless `value` is a valid `name` token. */
export function assertToken(name: TokenName, value: unknown, where: string): asserts value is Token {
  const validate = VALIDATORS[name];
  if (!validate(value)) throw new TokenInvalidError(name, where, describeErrors(validate.errors));
}

/** Tokens seen during one iteration: the latest of each kind (nothing more is kept). */
export class TokenLedger {
  private readonly latest = new Map<TokenName, Token>();

  /** Validates and records `value` if it is a token, and any token directly inside it. */
  observe(value: unknown, where: string): void {
    const name = claimedToken(value);
    if (name) {
      assertToken(name, value, where);
      this.latest.set(name, value as Token);
      return;
    }
    if (value === null || typeof value !== "object" || Array.isArray(value)) return;
    for (const key in value) {
      if (!Object.prototype.hasOwnProperty.call(value, key)) continue;
      const inner = (value as Record<string, unknown>)[key];
      const innerName = claimedToken(inner);
      if (innerName) {
        assertToken(innerName, inner, `${where}.${key}`);
        this.latest.set(innerName, inner as Token);
      }
    }
  }

  get<N extends TokenName>(name: N): Extract<Token, { token: N }> | undefined {
    return this.latest.get(name) as Extract<Token, { token: N }> | undefined;
  }

  all(): Token[] {
    return [...this.latest.values()];
  }
}
