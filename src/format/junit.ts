/** JUnit XML: one test case per manifest, failing when it has errors (warnings in system-out). */
import { summarize, type FileResult } from "../validator/diagnostic.js";
import { compactLine } from "./compact.js";

/** XML 1.0 text: escaped, with the control characters it cannot contain replaced. */
export function xml(s: string): string {
  return s
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g, "\uFFFD")
    .replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, "\uFFFD")
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&apos;");
}

export function formatJunit(results: readonly FileResult[]): string {
  const sum = summarize(results);
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="pulse-validate" tests="${sum.files}" failures="${sum.invalid}" errors="0">`,
    `  <testsuite name="pulse-validate" tests="${sum.files}" failures="${sum.invalid}" errors="0" skipped="0">`,
  ];
  for (const r of results) {
    lines.push(`    <testcase classname="${xml(r.file)}" name="manifest validation">`);
    const errors = r.diagnostics.filter((d) => d.severity === "error");
    const others = r.diagnostics.filter((d) => d.severity !== "error");
    if (errors.length) {
      const first = errors[0]!;
      const message = errors.length === 1 ? first.message : `${errors.length} errors, first: ${first.message}`;
      lines.push(`      <failure message="${xml(message)}" type="${xml(first.rule)}">${xml(errors.map((d) => compactLine(r.file, d)).join("\n"))}</failure>`);
    }
    if (others.length) lines.push(`      <system-out>${xml(others.map((d) => compactLine(r.file, d)).join("\n"))}</system-out>`);
    lines.push("    </testcase>");
  }
  lines.push("  </testsuite>", "</testsuites>");
  return lines.join("\n") + "\n";
}
