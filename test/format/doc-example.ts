/**
 * The example behind docs/validator-formats.md and docs/validator-json-format.md: a manifest
 * with a typo'd phase kind, an unknown key and a dangling closure, with the diagnostics the
 * validator reported for it (captured once, so the docs track the reporters, not rule wording).
 */
import type { FileResult } from "../../src/validator/diagnostic.js";

export const TRIAGE_YAML = [
  'pulse_protocol_version: "0.1"',
  "loop_id: support.triage",
  "version: 1.2.0",
  "phases:",
  "  - id: gather",
  "    kind: retreive",
  "    timeout: 500ms",
  "  - id: answer",
  "    kind: act",
  "  - id: learn",
  "    kind: learn",
  "closure: { from_phase: learn, to_phase: gathr }",
  "cadence: { type: event, params: { trigger: ticket.created } }",
  'substrates: { memory: "kv://tickets", policy: null, audit: "log://audit", auth: null }',
  "invariants: { phase_atomicity: true }",
  "connections:",
  "  - { id: escalate, emit_phase: answer, token: OutcomeSignal, to_loop: support.escalation }",
  "",
].join("\n");

export function docResults(): FileResult[] {
  return [
    {
      file: "loops/triage.yaml",
      valid: false,
      text: TRIAGE_YAML,
      diagnostics: [
        {
          severity: "warning",
          rule: "pulse/missing-retrieve",
          message: 'the loop has no phase of kind "retrieve" (§3.2: every loop must read context from a substrate)',
          pointer: "/phases",
          line: 4,
          column: 1,
          endLine: 4,
          endColumn: 7,
        },
        {
          severity: "error",
          rule: "schema/enum",
          message: 'phases[0].kind must be one of retrieve, route, act, learn, consolidate, custom; found the string "retreive"',
          pointer: "/phases/0/kind",
          line: 6,
          column: 11,
          endLine: 6,
          endColumn: 19,
          suggestion: 'did you mean "retrieve"?',
        },
        {
          severity: "error",
          rule: "schema/unknown-property",
          message: 'unknown property "timeout" in phases[0]',
          pointer: "/phases/0/timeout",
          line: 7,
          column: 5,
          endLine: 7,
          endColumn: 12,
          suggestion: 'did you mean "timeout_ms"?',
        },
        {
          severity: "error",
          rule: "pulse/closure-unknown-phase",
          message: 'closure.to_phase names phase "gathr", which this loop does not declare (phases: gather, answer, learn)',
          pointer: "/closure/to_phase",
          line: 12,
          column: 41,
          endLine: 12,
          endColumn: 46,
          suggestion: 'did you mean "gather"?',
        },
        {
          severity: "info",
          rule: "pulse/connection-external",
          message: 'connection refers to loop "support.escalation", which is not among the validated manifests (treated as external)',
          pointer: "/connections/0/to_loop",
          line: 17,
          column: 72,
          endLine: 17,
          endColumn: 90,
        },
      ],
    },
    { file: "loops/escalation.yaml", valid: true, diagnostics: [], text: "" },
  ];
}
