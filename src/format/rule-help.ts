import type { Severity } from "../validator/diagnostic.js";

/** What a report says about a rule: SARIF's rules[] and help text, from the rule catalogue. */
export interface RuleHelp {
  id: string;
  summary: string;
  explanation: string;
  defaultSeverity: Severity;
}
