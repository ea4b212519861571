/**
 * The validator: parse problems, schema findings and semantic findings for each source, then the
 * checks across all sources given together, each positioned in its file and given the severity
 * the catalogue, --strict and --config decide.
 */
import type { ManifestSource } from "../source/load.js";
import { sourceFromText } from "../source/load.js";
import { parseJsonc } from "../source/jsonc.js";
import { LineIndex } from "../source/line-index.js";
import { spanOf, toPointer, type Span } from "../source/source-node.js";
import { compareDiagnostics, type Diagnostic, type FileResult, type Severity } from "./diagnostic.js";
import { asObject } from "./access.js";
import type { Finding } from "./finding.js";
import { ruleInfo } from "./rule-catalog.js";
import { resolveLoop, resolveSystem, type LoopEntry } from "./resolver.js";
import { checkSchema } from "./schema-check.js";
import { schemaFindings } from "./schema-errors.js";
import { checkReferences } from "./rules/references.js";
import { checkStructure } from "./rules/structure.js";
import { checkCadence } from "./rules/cadence.js";
import { checkPhases } from "./rules/phases.js";
import { checkConnections } from "./rules/connections.js";
import { checkNesting } from "./rules/nesting.js";
import { checkSystem } from "./rules/system.js";
import { checkNumbers } from "./rules/numbers.js";
import { checkDataFlow } from "./rules/data-flow.js";

const LOOP_ID_PATH = ["loop_id"] as const;

export type SeverityOverride = Severity | "off";

export interface ValidateOptions {
  /** §3.2 structure rules become errors. */
  strict?: boolean;
  /** Per-rule severities from --config; only configurable rules may appear. */
  severities?: Readonly<Record<string, SeverityOverride>>;
}

export function severityFor(rule: string, options: ValidateOptions): SeverityOverride {
  const info = ruleInfo(rule);
  const configured = info?.configurable ? options.severities?.[rule] : undefined;
  if (configured !== undefined) return configured;
  if (options.strict && info?.strictSeverity) return info.strictSeverity;
  return info?.severity ?? "error";
}

class FileDiagnostics {
  /** Keeps this class's hidden classes alive across full GCs (see PhaseIndex.keptAlive). */
  static readonly keptAlive: FileDiagnostics = new FileDiagnostics({ file: "", format: "json", text: "", lines: new LineIndex(""), value: undefined, problems: [] }, {});

  readonly diagnostics: Diagnostic[] = [];

  constructor(
    readonly source: ManifestSource,
    private readonly options: ValidateOptions,
  ) {}

  add(finding: Finding): void {
    const severity = severityFor(finding.rule, this.options);
    if (severity === "off") return;
    const span = this.span(finding);
    const start = this.source.lines.position(span.start);
    const end = this.source.lines.position(Math.max(span.end, span.start));
    const d: Diagnostic = {
      severity,
      rule: finding.rule,
      message: finding.message,
      pointer: toPointer(finding.path),
      line: start.line,
      column: start.column,
      endLine: end.line,
      endColumn: span.end > span.start ? end.column : end.column + 1,
    };
    if (finding.suggestion) d.suggestion = finding.suggestion;
    if (finding.related?.length) d.related = finding.related;
    this.diagnostics.push(d);
  }

  addProblem(rule: string, message: string, start: number, end: number, severity: "error" | "warning"): void {
    const configured = severityFor(rule, this.options);
    if (configured === "off") return;
    const s = this.source.lines.position(start);
    const e = this.source.lines.position(Math.max(end, start));
    this.diagnostics.push({
      severity: ruleInfo(rule)?.configurable ? configured : severity,
      rule,
      message,
      pointer: "",
      line: s.line,
      column: s.column,
      endLine: e.line,
      endColumn: end > start ? e.column : e.column + 1,
    });
  }

  private span(finding: Finding): Span {
    const root = this.source.root;
    if (!root) return { start: 0, end: 0 };
    const span = spanOf(root, finding.path, finding.key ?? false);
    if (finding.offset === undefined) return span;
    return subSpan(this.source.text, span, finding.offset, finding.length ?? 1) ?? span;
  }

  result(): FileResult {
    sortDiagnostics(this.diagnostics);
    return {
      file: this.source.file,
      valid: !this.diagnostics.some((d) => d.severity === "error"),
      diagnostics: this.diagnostics,
      text: this.source.text,
    };
  }
}

/**
 * Stable sort in place. A file has a handful of diagnostics: insertion sort orders them without
 * the scratch memory Array.prototype.sort allocates on every call.
 */
function sortDiagnostics(list: Diagnostic[]): void {
  if (list.length > 16) {
    list.sort(compareDiagnostics);
    return;
  }
  for (let i = 1; i < list.length; i++) {
    const d = list[i] as Diagnostic;
    let j = i - 1;
    for (; j >= 0 && compareDiagnostics(list[j] as Diagnostic, d) > 0; j--) list[j + 1] = list[j] as Diagnostic;
    list[j + 1] = d;
  }
}

/**
 * Maps an offset inside a decoded string to the source, when the source spells the string
 * literally (plain or quoted without escapes); otherwise the whole value is underlined.
 */
function subSpan(text: string, span: Span, offset: number, length: number): Span | undefined {
  const raw = text.slice(span.start, span.end);
  const quoted = raw.length >= 2 && (raw[0] === '"' || raw[0] === "'") && raw[raw.length - 1] === raw[0];
  const inner = quoted ? raw.slice(1, -1) : raw;
  if (inner.includes("\\") || inner.includes("\n") || offset > inner.length) return undefined;
  const contentStart = span.start + (quoted ? 1 : 0);
  const start = contentStart + offset;
  const end = Math.min(start + Math.max(1, length), contentStart + inner.length);
  return { start, end: end > start ? end : start + 1 };
}

export function validateSources(sources: readonly ManifestSource[], options: ValidateOptions = {}): FileResult[] {
  const files = sources.map((s) => new FileDiagnostics(s, options));
  const entries: { entry: LoopEntry; file: FileDiagnostics }[] = [];
  for (const file of files) {
    const { source } = file;
    for (const p of source.problems) file.addProblem(p.rule, p.message, p.start, p.end, p.severity);
    if (source.value === undefined) continue;
    const schemaErrors = checkSchema(source.value);
    if (schemaErrors.length > 0) for (const f of schemaFindings(schemaErrors, source.value)) file.add(f);
    const manifest = asObject(source.value);
    if (!manifest) continue;
    const model = resolveLoop(manifest);
    const report = (f: Finding): void => file.add(f);
    checkReferences(manifest, model, report);
    checkStructure(model, report);
    checkCadence(model, report);
    checkPhases(manifest, model, report);
    checkConnections(model, report);
    checkNesting(model, report);
    // The parser saw every number: walk for non-finite ones only when it met one (or did not say).
    if (source.nonFinite !== false) checkNumbers(manifest, report);
    checkDataFlow(model, report);
    entries.push({ entry: { file: source.file, manifest, model }, file });
  }

  const loops = entries.map((e) => e.entry);
  // Most runs hold a few files: a backwards scan finds the last one of a name, as a Map would.
  let byFile: Map<string, FileDiagnostics> | undefined;
  const fileNamed = (name: string): FileDiagnostics | undefined => {
    if (entries.length > 8) {
      byFile ??= new Map(entries.map((e) => [e.entry.file, e.file]));
      return byFile.get(name);
    }
    for (let i = entries.length - 1; i >= 0; i--) if (entries[i]?.entry.file === name) return entries[i]?.file;
    return undefined;
  };
  checkSystem(resolveSystem(loops), (fileName, finding) => {
    if (finding.related) {
      // Related locations name another loop's file: point at that loop's loop_id.
      const related = finding.related.map((r) => {
        const target = fileNamed(r.file)?.source;
        if (!target?.root || r.line !== 0) return r;
        const pos = target.lines.position(spanOf(target.root, LOOP_ID_PATH).start);
        return { ...r, line: pos.line, column: pos.column };
      });
      finding = { ...finding, related };
    }
    fileNamed(fileName)?.add(finding);
  });
  return files.map((f) => f.result());
}

const INFINITY_MARK = "\u0000pulse:Infinity";
const INFINITY_TEXT = /"(-?)\\u0000pulse:Infinity"/g;

/**
 * Validates an in-memory manifest (the runtime's entry point). Positions refer to the manifest
 * serialised as 2-space JSON, and the pointer names the field either way.
 */
export function validateValue(value: unknown, name = "<manifest>", options: ValidateOptions = {}): FileResult {
  let text: string;
  try {
    // JSON.stringify writes ±Infinity as null; a file would spell it 1e400, which reads back as Infinity.
    text = JSON.stringify(value, null, 2) ?? "";
    // ±Infinity comes out as null; a replacer slows the whole serialisation, so it runs only when a null shows.
    if (text.includes("null")) {
      text = (JSON.stringify(value, (_, v: unknown) => (v === Infinity ? INFINITY_MARK : v === -Infinity ? `-${INFINITY_MARK}` : v), 2) ?? "").replace(INFINITY_TEXT, "$11e400");
    }
  } catch {
    text = "";
  }
  const source = sourceFromText(name, text, "json", parseJsonc);
  return validateSources([source], options)[0] as FileResult;
}
