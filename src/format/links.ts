/** Where users read about the tool and its rules (SARIF helpUri, step-summary links). */
import { anchor } from "../validator/rules-doc.js";

export const INFORMATION_URI = "https://github.com/opensentience/pulse";

export function ruleHelpUri(rule: string): string {
  return `${INFORMATION_URI}/blob/main/docs/rules.md#${anchor(rule)}`;
}
