/** SARIF 2.1.0, as GitHub code scanning and other SARIF viewers read it. */
import type { FileResult, Severity } from "../validator/diagnostic.js";
import { anchor } from "../validator/rules-doc.js";
import type { ReportOptions } from "./report.js";

const INFO_URI = "https://github.com/opensentience/pulse";
const LEVEL: Record<Severity, "error" | "warning" | "note"> = { error: "error", warning: "warning", info: "note" };

/** A relative, forward-slash, percent-encoded URI reference (RFC 3986) for a file path. */
export function fileUri(file: string): string {
  const path = file.replace(/\\/g, "/").replace(/^\.\//, "");
  const encoded = path
    .split("/")
    .map((seg) => encodeURIComponent(seg))
    .join("/");
  return path.startsWith("/") ? `file://${encoded}` : encoded;
}

export function formatSarif(results: readonly FileResult[], options: ReportOptions): string {
  const ruleIndex = new Map(options.rules.map((r, i) => [r.id, i]));
  const rules = options.rules.map((r) => ({
    id: r.id,
    shortDescription: { text: r.summary },
    fullDescription: { text: r.explanation },
    defaultConfiguration: { level: LEVEL[r.defaultSeverity] },
    helpUri: `${INFO_URI}/blob/main/docs/rules.md#${anchor(r.id)}`,
  }));
  const relative = (file: string) => !fileUri(file).startsWith("file://");
  const sarifResults = results.flatMap((r) =>
    r.diagnostics.map((d) => {
      const location: Record<string, unknown> = { uri: fileUri(r.file) };
      if (relative(r.file)) location.uriBaseId = "%SRCROOT%";
      const result: Record<string, unknown> = {
        ruleId: d.rule,
        level: LEVEL[d.severity],
        message: { text: d.suggestion ? `${d.message} (${d.suggestion})` : d.message },
        locations: [
          {
            physicalLocation: {
              artifactLocation: location,
              region: { startLine: d.line, startColumn: d.column, endLine: d.endLine, endColumn: d.endColumn },
            },
          },
        ],
      };
      const index = ruleIndex.get(d.rule);
      if (index !== undefined) result.ruleIndex = index;
      if (d.pointer) result.properties = { pointer: d.pointer };
      return result;
    }),
  );
  const log = {
    $schema: "https://json.schemastore.org/sarif-2.1.0.json",
    version: "2.1.0",
    runs: [
      {
        tool: { driver: { name: "pulse-validate", version: options.toolVersion, informationUri: INFO_URI, rules } },
        artifacts: results.map((r) => ({ location: relative(r.file) ? { uri: fileUri(r.file), uriBaseId: "%SRCROOT%" } : { uri: fileUri(r.file) } })),
        results: sarifResults,
      },
    ],
  };
  return JSON.stringify(log, null, 2) + "\n";
}
