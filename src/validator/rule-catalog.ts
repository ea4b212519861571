/**
 * Every rule the validator can report: stable id, default severity, one-line summary and the
 * explanation `pulse-validate --explain RULE` prints. A test checks that every id a rule emits
 * is listed here, and docs/rules.md is generated from this list.
 */
import type { Severity } from "./diagnostic.js";

export interface RuleInfo {
  id: string;
  severity: Severity;
  /** Severity under --strict, when it differs. */
  strictSeverity?: Severity;
  /** Whether --config may change or disable it. Parse and schema errors cannot be turned off. */
  configurable: boolean;
  summary: string;
  explanation: string;
}

const fixed = (id: string, severity: Severity, summary: string, explanation: string): RuleInfo => ({ id, severity, configurable: false, summary, explanation });
const rule = (id: string, severity: Severity, summary: string, explanation: string, strictSeverity?: Severity): RuleInfo =>
  strictSeverity ? { id, severity, strictSeverity, configurable: true, summary, explanation } : { id, severity, configurable: true, summary, explanation };

export const RULES: readonly RuleInfo[] = [
  // Reading the file
  fixed("input/empty", "error", "The file is empty.", "A manifest must contain one JSON or YAML object describing a loop (§4). An empty file, or one holding only whitespace or comments, is refused."),
  fixed("input/binary", "error", "The file is binary.", "The file contains NUL bytes, so it is not a text manifest. Check that the right file was passed."),
  fixed("input/encoding", "error", "The file is not UTF-8.", "Manifests are read as UTF-8 (an optional BOM is accepted). UTF-16 files and invalid byte sequences are refused; re-save the file as UTF-8."),
  fixed("input/too-large", "error", "The file exceeds the size limit.", "Manifests are small documents; files above the limit (1 MiB by default) are refused before they are read, so a stray log or data file cannot exhaust memory. Raise the limit with --max-file-size if a real manifest needs it."),
  fixed("input/too-deep", "error", "The document nests too deeply.", "Objects and arrays nested more than 256 levels deep are refused: no manifest needs that, and unbounded nesting is a denial-of-service vector for every tool that reads the file."),
  fixed("input/too-complex", "error", "YAML alias expansion is too large.", "YAML aliases (*name) can expand exponentially (the 'billion laughs' attack). The validator expands at most 100,000 nodes and refuses documents beyond that."),
  fixed("input/duplicate-key", "error", "A key appears twice in one object.", "JSON and YAML parsers disagree on which of two equal keys wins (most keep the last, silently). A duplicated key is almost always an editing mistake, so it is an error. Remove one of them."),
  fixed("input/not-a-manifest", "warning", "A JSON/YAML file in a searched directory is not a manifest.", "A directory search validates only the JSON and YAML files that name loop_id or pulse_protocol_version, so a project's package.json and reports are left alone; it says how many it skipped (pulse-validate --verbose lists them). Under --strict each skipped file is reported with this warning, so a manifest that lost both keys (or was never one) cannot pass CI unseen. Name a file on the command line to validate it whatever it holds."),
  fixed("json/syntax", "error", "The JSON is malformed.", "The file could not be parsed as JSON. Comments (// and /* */) are accepted, as in the spec's jsonc examples; everything else follows RFC 8259. The message names what was expected at the position."),
  rule("json/trailing-comma", "warning", "A trailing comma in JSON.", "A comma before } or ] is accepted by pulse-validate but rejected by JSON.parse and most other tools. Remove it so the manifest stays portable."),
  fixed("yaml/syntax", "error", "The YAML is malformed.", "The file could not be parsed as YAML 1.2. Only the first syntax error is reported, where it is (a mis-indented line is named with the column it should have), since the errors after it are usually its echoes; validation stops there, as schema checks on a broken parse would only produce noise."),
  rule("yaml/warning", "warning", "The YAML parser warned.", "The YAML parser accepted the document but flagged something likely to be a mistake, such as an unknown tag."),
  fixed("yaml/recursive-alias", "error", "A YAML alias refers to its own ancestor.", "A recursive alias describes an infinite document, which has no JSON equivalent."),
  fixed("yaml/complex-key", "error", "A YAML key is a collection.", "Manifest keys must be strings. YAML allows maps and lists as keys, but they have no JSON equivalent."),
  fixed("yaml/non-json-value", "error", "A YAML value has no JSON equivalent.", "Values such as binary data, timestamps or custom tags cannot be represented in JSON, and PULSE manifests are JSON documents (§4). (.inf and .nan are numbers: see pulse/number-not-finite.)"),

  // The published JSON Schema
  fixed("schema/unknown-property", "error", "A property the schema does not define.", "Every object of a PULSE v0.1 manifest is closed (additionalProperties: false in the published schema). An unknown key is usually a typo; the diagnostic suggests the nearest valid name. Free-form data belongs in cadence.params."),
  fixed("schema/required", "error", "A required property is missing.", "The published schema requires pulse_protocol_version, loop_id, version, phases, closure, cadence, substrates and invariants at the top level, id and kind on each phase (and custom_kind when kind is custom), from_phase/to_phase on the closure, type on a cadence, memory/policy/audit/auth in substrates, and id, emit_phase, token and to_loop on each connection."),
  fixed("schema/type", "error", "A value has the wrong type.", "The value's JSON type does not match the schema (for example a quoted number where an integer is expected)."),
  fixed("schema/enum", "error", "A value is not one of the allowed values.", "Fields such as phase kind, cadence type, on_failure, wait, delivery and token take a fixed set of values (§3–§11). The diagnostic suggests the nearest allowed value."),
  fixed("schema/pattern", "error", "A string does not have the required form.", "pulse_protocol_version is 0.1 or 0.1.x, loop_id is dotted lowercase (org.loop), version is MAJOR.MINOR.PATCH and phase ids are lowercase letters, digits and underscores."),
  fixed("schema/items", "error", "An array has too few or too many items.", "A loop needs at least two phases (published schema)."),
  fixed("schema/range", "error", "A number is out of range.", "For example timeout_ms must be at least 1, max_retries at least 0 and max_inflight at least 1."),
  fixed("schema/length", "error", "A string is too short or too long.", "Identifiers and names must not be empty."),
  fixed("schema/format", "error", "A string is not in the required format.", "For example a timestamp must be an RFC 3339 date-time."),
  fixed("schema/invalid", "error", "The schema rejected a value.", "A schema rule without a more specific message failed; the message quotes the schema's own wording."),

  // Beyond the schema: one manifest
  fixed("pulse/version-unsupported", "error", "The manifest needs a newer PULSE version.", "§16: runtimes must reject manifests declaring a higher minor version than they support and accept lower ones. This validator supports 0.1 and 0.1.x; a manifest declaring 0.2 or 1.0 is refused with both versions named."),
  rule("pulse/duplicate-phase-id", "error", "Two phases share an id.", "Phase ids identify phases in closures, routes, connections and triggers, so each must be unique within the loop (§4)."),
  rule("pulse/closure-unknown-phase", "error", "The closure names a phase that does not exist.", "closure.from_phase and closure.to_phase must name phases of this loop (§1.1, §4): the closure is where the loop returns."),
  rule("pulse/connection-unknown-phase", "error", "A connection's emit_phase does not exist.", "connections[].emit_phase names the phase of this loop whose completion emits the signal (§3.5)."),
  rule("pulse/endpoint-unknown-phase", "error", "An input or output names a phase that does not exist.", "inputs.from and outputs.to may name phases as phase:<id> (§4, §5.3); the id must be a phase of this loop."),
  rule("pulse/trigger-unknown-phase", "error", "An inner-loop trigger names a phase that does not exist.", "An inner loop is triggered by a phase of the outer loop: trigger is phase:<id>, optionally followed by 'when <expression>' (§3.6, §11.1)."),
  rule("pulse/endpoint-syntax", "error", "An endpoint is malformed.", "inputs.from, outputs.to and closure.via are endpoints: external, phase:<id>, substrate:<slot>, signal:<Token> or loop:<loop_id>, with alternatives joined by | (e.g. external|signal:OutcomeSignal)."),
  rule("pulse/endpoint-loop", "warning", "A loop:<id> endpoint that the runtime does not act on.", "The spec defines no endpoint grammar; the protocol authors' published manifests write another loop as loop:<loop_id>, and pulse accepts it. But pulse moves data between loops through connections only (§3.5, §10): outputs.to: loop:X sends nothing unless a connection from the same phase targets X (then the endpoint just documents it, and no warning is given), and inputs.from: loop:X reads nothing (the phase gets the iteration's input or the previous phase's output; X's signals arrive through X's own connections)."),
  rule("pulse/input-from-previous-iteration", "info", "A phase reads the output of a phase that runs after it.", "inputs.from: phase:X where X runs later in the iteration (or is the phase itself): the data is X's output from the previous iteration, and there is none in the first iteration. Later iterations start at closure.to_phase (docs/decisions.md)."),
  rule("pulse/input-never-available", "warning", "A phase reads the output of a phase that never runs before it.", "inputs.from: phase:X where X runs later and the reader never runs again after X: the reader runs only in the first iteration (it comes before closure.to_phase), or X comes after closure.from_phase, where every iteration ends. The data never arrives."),
  rule("pulse/trigger-syntax", "error", "An inner-loop trigger is malformed.", "A trigger is phase:<id>, optionally followed by 'when' and an expression: phase:route_topology when kappa > 0."),
  rule("pulse/expression-syntax", "error", "An expression does not parse.", "emit_condition, trigger conditions and cadence filters use one small expression language: paths (a.b), literals, == != < <= > >=, in [..], not in, and, or, not, parentheses. See docs/expressions.md. Expressions are parsed, never evaluated as code."),
  rule("pulse/signature-recipe", "error", "A signature recipe is malformed.", "phase.signature narrows which input fields enter the BLAKE3 signature: hash(field, other.field, ...) (§5.6), or as published manifests spell it, sha256(canonical_json({field, other.field})). Fields must be distinct."),
  rule("pulse/signature-not-blake3", "warning", "A signature recipe names a digest pulse does not apply.", "§5.6 recommends BLAKE3 and defines no recipe grammar. pulse reads sha256(canonical_json({a, b})) and the like for the fields they name, and signs with BLAKE3-256 over the RFC 8785 canonical JSON of {loop_id, phase_id, workspace_id, inputs} narrowed to those fields, written blake3:<64 hex> (docs/decisions.md). Another runtime that applies the named digest computes a different signature for the same call, so idempotency keys do not match across runtimes. Write hash(a, b) to say what pulse does."),
  rule("pulse/unknown-token", "warning", "A signal endpoint names a non-canonical token.", "Signals between loops carry one of the canonical tokens (§6: TopologyContext, DeliberationResult, OutcomeSignal, ReputationUpdate, ConsolidationEvent, and SurpriseSignal since v0.1.1) or the EscalationRequest of §5.4. Another loop will not understand any other name."),
  rule("pulse/substrate-unbound", "warning", "An endpoint uses a substrate slot that is not bound.", "substrate:<slot> in an input, output or closure refers to the loop's substrates map; that slot is null or missing, so a runtime has nothing to bind it to (§3.4)."),
  rule("pulse/missing-retrieve", "warning", "The loop has no retrieve phase.", "§3.2: a loop must include at least one retrieve phase. A warning by default because the spec's own PRISM example (§15.2, all custom kinds) and AgenTroMatic example (§15.3) break it; an error under --strict.", "error"),
  rule("pulse/missing-act", "warning", "The loop has no act phase.", "§3.2: a loop must include at least one act phase. A warning by default (the spec's PRISM example has none); an error under --strict.", "error"),
  rule("pulse/closure-not-grounded", "warning", "The closure does not bring an outcome back to retrieval.", "§3.2: the closure path must route at least one learn or consolidate outcome back to a retrieve. Checked as: closure.to_phase is a retrieve phase, and a learn or consolidate phase runs at or before closure.from_phase. A warning by default; an error under --strict.", "error"),
  rule("pulse/cadence-param-missing", "error", "A cadence lacks a required parameter.", "§8: event needs params.trigger, periodic params.interval, streaming params.stream, idle params.min_idle_ms, cross_loop_signal params.from_loop."),
  rule("pulse/cadence-param-invalid", "error", "A cadence parameter has an invalid value.", "Durations are 500ms, 30s, 5m, 1h, 1d, 1w, ISO-8601 (PT1H) or hourly/daily/weekly/monthly; rates are N/unit (10/min, 5/s, 100/h); min_idle_ms, batch_size and max_iteration_per_idle are integers; filter is an expression; phase_offset is shorter than the interval."),
  rule("pulse/cadence-param-unknown", "warning", "A cadence parameter is not defined for its type.", "cadence.params is free-form in the schema, but each cadence type of §8 defines its parameters. An unknown one is usually a typo and is ignored by runtimes."),
  rule("pulse/cadence-fallback-redundant", "warning", "A fallback cadence repeats a type.", "A fallback (§3.3) is tried when its primary cadence cannot trigger; one of the same type adds nothing."),
  rule("pulse/max-retries-ignored", "warning", "max_retries without on_failure: retry.", "§5.4: max_retries bounds retries, which only happen when on_failure is retry."),
  rule("pulse/phase-invariant-disabled", "warning", "A phase relies on an invariant the loop disables.", "phase.invariant names an invariant (§7) that invariants declares false or omits, so no runtime enforces it for this phase."),
  rule("pulse/custom-kind-ignored", "warning", "custom_kind on a canonical phase.", "custom_kind is only meaningful with kind: custom (§3.2)."),
  rule("pulse/duplicate-connection-id", "error", "Two connections share an id.", "Connection ids identify signal routes in audit events and telemetry; they must be unique within the loop."),
  rule("pulse/overflow-without-limit", "warning", "overflow_policy without max_inflight.", "§10.3: the overflow policy applies when max_inflight signals are in flight; without a limit it never applies."),
  rule("pulse/nesting-cycle", "error", "Loops nest in a cycle.", "§3.6: a loop contains its inner loops; a loop containing itself, directly or through other loops, cannot be executed."),
  rule("pulse/duplicate-inner-loop", "warning", "An inner loop is declared twice.", "Each inner loop should be declared once; two declarations with different triggers are clearer as one loop with a combined condition."),
  rule("pulse/bounded-without-timeout", "error", "wait: bounded without timeout_ms.", "§11.2: a bounded wait continues after timeout_ms; without it there is no bound."),
  rule("pulse/number-not-finite", "warning", "A number is infinite or NaN.", "A number too large for a double (1e400) is read as Infinity by JSON and YAML parsers alike, and YAML spells it .inf. The published schema accepts Infinity wherever it accepts an integer, so this is no schema error (docs/decisions.md), but it is rarely meant: the message says what pulse does with it (timeout_ms: no time limit; max_retries: retries without end; max_inflight: no limit). NaN (.nan) has no JSON form at all."),
  rule("pulse/timeout-ignored", "warning", "timeout_ms on a wait mode that ignores it.", "§11.2: only wait: bounded has a timeout."),

  // Beyond the schema: several manifests together
  rule("pulse/duplicate-loop-id", "error", "Two manifests declare the same loop_id.", "loop_id names a loop in connections, nesting and signals (§3.1); two manifests with one id make those references ambiguous."),
  rule("pulse/connection-unresolved", "error", "A connection targets a phase the target loop lacks.", "When the target loop's manifest is validated too, connections[].to_phase must be one of its phases. (The spec's §4 example targets prism.benchmark phase observe_judgments, which §15.2 does not declare.)"),
  rule("pulse/connection-external", "info", "A connection targets a loop outside the validated set.", "The target loop's manifest was not given, so its phases cannot be checked. Validate the manifests together to check the connection."),
  rule("pulse/signal-source-unresolved", "error", "A cross_loop_signal cadence names a phase the source loop lacks.", "§8.5: from_phase must be a phase of from_loop when that loop's manifest is validated too."),
  rule("pulse/signal-source-external", "info", "A cross_loop_signal cadence listens to a loop outside the validated set.", "The source loop's manifest was not given, so from_phase cannot be checked."),
  rule("pulse/inner-loop-external", "info", "An inner loop is outside the validated set.", "The inner loop's manifest was not given, so its parent_loop cannot be compared."),
  rule("pulse/nesting-disagreement", "warning", "parent_loop and inner_loops disagree.", "§3.6: when loop A lists B in inner_loops, B's parent_loop should be A, and the reverse. (The spec's PRISM example lists Graphonomous as inner loop while the Graphonomous example declares parent_loop: null.)"),
];

const byId = new Map(RULES.map((r) => [r.id, r]));

export function ruleInfo(id: string): RuleInfo | undefined {
  return byId.get(id);
}
