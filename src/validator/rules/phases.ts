/** Per-phase fields the schema cannot relate to each other (§5.2, §5.4, §5.6, §7). */
import { parseSignatureRecipeCached as parseSignatureRecipe } from "../../grammar/cached.js";
import { BLAKE3_FUNCTIONS, type SignatureRecipe } from "../../grammar/signature-recipe.js";
import { asObject, asString, type Json } from "../access.js";
import type { LoopModel } from "../resolver.js";
import { getOwn } from "../../source/own-property.js";
import type { Report } from "../finding.js";

export function checkPhases(manifest: Json, model: LoopModel, report: Report): void {
  const invariants = asObject(manifest.invariants);
  for (const { item, index, kind } of model.phases) {
    const signature = asString(item.signature);
    if (signature !== undefined) {
      const parsed = parseSignatureRecipe(signature);
      if (!parsed.ok) {
        report({ rule: "pulse/signature-recipe", path: ["phases", index, "signature"], message: parsed.error.message, offset: parsed.error.offset, length: Math.max(1, parsed.error.length) });
      } else if (!BLAKE3_FUNCTIONS.includes(parsed.value.fn)) {
        report({ rule: "pulse/signature-not-blake3", path: ["phases", index, "signature"], message: notBlake3(parsed.value) });
      }
    }
    const onFailure = asString(item.on_failure);
    if (item.max_retries !== undefined && onFailure !== "retry") {
      report({
        rule: "pulse/max-retries-ignored",
        path: ["phases", index, "max_retries"],
        key: true,
        message: `max_retries has no effect: on_failure is ${onFailure === undefined ? "not set" : `"${onFailure}"`}, not "retry" (§5.4)`,
      });
    }
    const invariant = asString(item.invariant);
    if (invariant !== undefined && invariants && getOwn(invariants, invariant) !== true) {
      report({
        rule: "pulse/phase-invariant-disabled",
        path: ["phases", index, "invariant"],
        message: `this phase relies on invariant "${invariant}", but invariants.${invariant} is not true, so no runtime will enforce it (§7)`,
      });
    }
    if (item.custom_kind !== undefined && kind !== undefined && kind !== "custom") {
      report({ rule: "pulse/custom-kind-ignored", path: ["phases", index, "custom_kind"], key: true, message: `custom_kind is ignored because kind is "${kind}", not "custom" (§3.2)` });
    }
  }
}

/** What src/runtime/signature.ts does with a recipe that names another digest: it reads the fields only. */
function notBlake3(recipe: SignatureRecipe): string {
  const fields = recipe.fields.map((f) => f.path.join("."));
  const envelope = fields.filter((f) => f === "loop_id" || f === "phase_id" || f === "inputs");
  const serialised = recipe.encoding ? ` and ${recipe.encoding}` : "";
  let message =
    `pulse signs with BLAKE3-256, not ${recipe.fn} (§5.6 recommends BLAKE3; docs/decisions.md): it hashes the RFC 8785 canonical JSON of {loop_id, phase_id, workspace_id, inputs} ` +
    `with inputs narrowed to ${fields.join(", ")}, and writes the signature as blake3:<64 hex>; the ${recipe.fn}${serialised} of this recipe ${recipe.encoding ? "are" : "is"} not applied`;
  if (envelope.length > 0) message += `. ${envelope.map((f) => `"${f}"`).join(" and ")} ${envelope.length === 1 ? "is" : "are"} read as ${envelope.length === 1 ? "a field" : "fields"} of the phase input (null when absent); the loop, phase and workspace are always signed`;
  return message;
}
