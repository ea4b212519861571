/** §3.2, §4, §5.3: phase ids are unique and every phase a manifest names exists. */
import { TOKEN_NAMES } from "../../manifest/types.js";
import { asObject, type Json } from "../access.js";
import { getOwn } from "../../source/own-property.js";
import type { Report } from "../finding.js";
import type { LoopModel, PhaseRefRole } from "../resolver.js";
import { closest, didYouMean, someOf } from "../../grammar/suggest.js";

const ROLE_RULE: Record<PhaseRefRole, string> = {
  "closure.from_phase": "pulse/closure-unknown-phase",
  "closure.to_phase": "pulse/closure-unknown-phase",
  "connection.emit_phase": "pulse/connection-unknown-phase",
  endpoint: "pulse/endpoint-unknown-phase",
  "inner_loop.trigger": "pulse/trigger-unknown-phase",
};

const ROLE_TEXT: Record<PhaseRefRole, string> = {
  "closure.from_phase": "closure.from_phase",
  "closure.to_phase": "closure.to_phase",
  "connection.emit_phase": "emit_phase",
  endpoint: "this endpoint",
  "inner_loop.trigger": "this trigger",
};

/** Tokens a `signal:` endpoint may name: the canonical six, plus the §5.4 escalation signal. */
const SIGNAL_TOKENS: readonly string[] = [...TOKEN_NAMES, "EscalationRequest"];
const SIGNAL_TOKEN_SET = new Set(SIGNAL_TOKENS);

export function checkReferences(manifest: Json, model: LoopModel, report: Report): void {
  for (const { id, index, first } of model.phases) {
    if (first !== index) {
      report({ rule: "pulse/duplicate-phase-id", path: ["phases", index, "id"], message: `phase id "${id}" is already used by phases[${first}]; phase ids must be unique within a loop` });
    }
  }

  for (const ref of model.refs) {
    if (ref.found) continue;
    // A handful of ids, not all of them: thousands of phases would make every message huge.
    const known = model.phaseIndex.size > 0 ? ` (phases: ${someOf(model.phaseIndex.keys())})` : "";
    const finding = {
      rule: ROLE_RULE[ref.role],
      path: ref.path,
      message: `${ROLE_TEXT[ref.role]} names phase "${ref.phase}", which this loop does not declare${known}`,
    };
    if (ref.offset !== undefined) Object.assign(finding, { offset: ref.offset, length: ref.length });
    const suggestion = didYouMean(ref.suggestion);
    report(suggestion ? { ...finding, suggestion } : finding);
  }

  for (const issue of model.grammarIssues) {
    report({ rule: issue.rule, path: issue.path, message: issue.error.message, offset: issue.error.offset, length: Math.max(1, issue.error.length) });
  }

  const substrates = asObject(manifest.substrates);
  for (const endpoint of model.endpoints) {
    for (const ref of endpoint.refs) {
      if (ref.kind === "signal" && !SIGNAL_TOKEN_SET.has(ref.token)) {
        const s = closest(ref.token, SIGNAL_TOKENS);
        const f = {
          rule: "pulse/unknown-token",
          path: endpoint.path,
          message: `"${ref.token}" is not a canonical PULSE token (${TOKEN_NAMES.join(", ")}); other loops will not understand it`,
          offset: ref.offset,
          length: ref.length,
        };
        const suggestion = didYouMean(s);
        report(suggestion ? { ...f, suggestion } : f);
      }
      if (ref.kind === "substrate" && substrates && typeof getOwn(substrates, ref.slot) !== "string") {
        report({
          rule: "pulse/substrate-unbound",
          path: endpoint.path,
          message: `substrate:${ref.slot} is used here but substrates.${ref.slot} is ${getOwn(substrates, ref.slot) === null ? "null" : "not declared"}`,
          offset: ref.offset,
          length: ref.length,
        });
      }
    }
  }
}
