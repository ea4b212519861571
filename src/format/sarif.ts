/**
 * SARIF 2.1.0, in the subset GitHub code scanning ingests: one run, the whole rule catalogue as
 * tool.driver.rules (with the help text code scanning requires), one result per diagnostic with
 * a region whose startLine is always present, and relative percent-encoded artifact URIs
 * resolved against %SRCROOT%.
 */
import type { Diagnostic, FileResult, RelatedLocation, Severity } from "../validator/diagnostic.js";
import { INFORMATION_URI, ruleHelpUri } from "./links.js";
import type { RuleHelp } from "./rule-help.js";
import { messageWithSuggestion, wellFormed } from "./text.js";

export const SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json";
const SRCROOT = "%SRCROOT%";
const LEVEL: Record<Severity, "error" | "warning" | "note"> = { error: "error", warning: "warning", info: "note" };

/**
 * One path segment, percent-encoded: encodeURIComponent leaves only unreserved characters and
 * the sub-delims `!'()*`, all of which RFC 3986 allows in a segment.
 */
function encodeSegment(segment: string): string {
  return encodeURIComponent(wellFormed(segment));
}

/**
 * A file path as a URI reference: forward slashes, each segment percent-encoded. Relative paths
 * stay relative (resolved against %SRCROOT%); absolute ones become file: URIs.
 */
export function fileUri(file: string): { uri: string; uriBaseId?: string } {
  const path = file.replace(/\\/g, "/").replace(/^(\.\/)+/, "");
  if (/^[A-Za-z]:\//.test(path)) return { uri: `file:///${path.slice(0, 2)}/${path.slice(3).split("/").map(encodeSegment).join("/")}` };
  const encoded = path.split("/").map(encodeSegment).join("/");
  if (path.startsWith("/")) return { uri: `file://${encoded}` };
  return { uri: encoded, uriBaseId: SRCROOT };
}

interface Region {
  startLine: number;
  startColumn?: number;
  endLine?: number;
  endColumn?: number;
}

/** GitHub requires startLine; a file-level diagnostic (line 0) is placed on the first line. */
function region(d: Diagnostic): Region {
  if (d.line < 1) return { startLine: 1 };
  const r: Region = { startLine: d.line, startColumn: Math.max(d.column, 1) };
  if (d.endLine >= d.line) {
    r.endLine = d.endLine;
    if (d.endColumn >= 1 && (d.endLine > d.line || d.endColumn >= (r.startColumn as number))) r.endColumn = d.endColumn;
  }
  return r;
}

function rulesOf(diagnostics: readonly Diagnostic[], catalogue: readonly RuleHelp[]): RuleHelp[] {
  const rules = [...catalogue];
  const known = new Set(rules.map((r) => r.id));
  // A rule missing from the catalogue still gets a descriptor, so every ruleIndex resolves.
  for (const d of diagnostics) {
    if (known.has(d.rule)) continue;
    known.add(d.rule);
    rules.push({ id: d.rule, summary: d.rule, explanation: d.rule, defaultSeverity: d.severity });
  }
  return rules;
}

function descriptor(r: RuleHelp) {
  return {
    id: r.id,
    shortDescription: { text: r.summary },
    fullDescription: { text: r.explanation },
    defaultConfiguration: { level: LEVEL[r.defaultSeverity] },
    helpUri: ruleHelpUri(r.id),
    // Code scanning requires help text; explanations are plain text, so no markdown variant.
    help: { text: r.explanation },
  };
}

function relatedLocation(r: RelatedLocation, id: number) {
  const physicalLocation: Record<string, unknown> = { artifactLocation: fileUri(r.file) };
  if (r.line >= 1) physicalLocation.region = { startLine: r.line, startColumn: Math.max(r.column, 1) };
  return { id, message: { text: r.message }, physicalLocation };
}

/** GitHub code scanning rejects a whole upload whose run has more results than this. */
export const MAX_SARIF_RESULTS = 25_000;

const RANK: Record<string, number> = { error: 0, warning: 1, note: 2 };

/** The most severe `max` results, in their original order, and how many were left out. */
function capped(results: Record<string, unknown>[], max: number): { kept: Record<string, unknown>[]; omitted: number } {
  if (results.length <= max) return { kept: results, omitted: 0 };
  const order = results.map((r, i) => ({ i, rank: RANK[r.level as string] ?? 3 }));
  order.sort((a, b) => a.rank - b.rank || a.i - b.i);
  const keep = order.slice(0, max).map((o) => o.i).sort((a, b) => a - b);
  return { kept: keep.map((i) => results[i] as Record<string, unknown>), omitted: results.length - max };
}

export function formatSarif(results: readonly FileResult[], options: { toolVersion: string; rules: readonly RuleHelp[] }): string {
  const rules = rulesOf(results.flatMap((r) => r.diagnostics), options.rules);
  const ruleIndex = new Map(rules.map((r, i) => [r.id, i]));
  const artifactIndex = new Map<string, number>();
  for (const r of results) if (!artifactIndex.has(r.file)) artifactIndex.set(r.file, artifactIndex.size);

  const sarifResults = results.flatMap((r) =>
    r.diagnostics.map((d) => {
      const result: Record<string, unknown> = {
        ruleId: d.rule,
        ruleIndex: ruleIndex.get(d.rule),
        level: LEVEL[d.severity],
        message: { text: messageWithSuggestion(d) },
        locations: [{ physicalLocation: { artifactLocation: { ...fileUri(r.file), index: artifactIndex.get(r.file) }, region: region(d) } }],
      };
      if (d.related?.length) result.relatedLocations = d.related.map((rel, i) => relatedLocation(rel, i + 1));
      result.properties = { pointer: d.pointer };
      return result;
    }),
  );

  const { kept, omitted } = capped(sarifResults, MAX_SARIF_RESULTS);
  const run: Record<string, unknown> = {
    tool: { driver: { name: "pulse-validate", version: options.toolVersion, informationUri: INFORMATION_URI, rules: rules.map(descriptor) } },
    columnKind: "utf16CodeUnits",
    artifacts: [...artifactIndex.keys()].map((file) => ({ location: fileUri(file) })),
    results: kept,
  };
  if (omitted > 0) {
    const text = `${omitted} of ${sarifResults.length} results omitted (the least severe): GitHub code scanning rejects a run with more than ${MAX_SARIF_RESULTS}. The json format lists them all.`;
    run.invocations = [{ executionSuccessful: true, toolExecutionNotifications: [{ level: "warning", message: { text } }] }];
  }
  const log = { $schema: SARIF_SCHEMA, version: "2.1.0", runs: [run] };
  return JSON.stringify(log, null, 2) + "\n";
}
