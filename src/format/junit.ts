/**
 * JUnit XML, as CI systems (GitLab, Jenkins, Azure Pipelines) import it: one test suite, one
 * test case per manifest, failing when the manifest has errors. Warnings and infos go to the
 * case's <system-out>, so they are visible without failing it.
 */
import type { Diagnostic, FileResult } from "../validator/diagnostic.js";
import { compactLine } from "./compact.js";
import { plural, singleLine, wellFormed } from "./text.js";

/** Characters XML 1.0 cannot contain at all, even escaped: replaced by U+FFFD. */
const NOT_XML = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g;

const TEXT_ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", "\r": "&#13;" };
const ATTRIBUTE_ESCAPES: Record<string, string> = { ...TEXT_ESCAPES, '"': "&quot;", "\n": "&#10;", "\t": "&#9;" };

function legal(s: string): string {
  return wellFormed(s).replace(NOT_XML, "\uFFFD");
}

/** Character data: `>` is escaped too, so `]]>` cannot appear; CR is kept as a reference. */
export function xmlText(s: string): string {
  return legal(s).replace(/[&<>\r]/g, (ch) => TEXT_ESCAPES[ch] as string);
}

/** A double-quoted attribute value; whitespace as references so parsers do not normalise it. */
export function xmlAttribute(s: string): string {
  return legal(s).replace(/[&<>"\r\n\t]/g, (ch) => ATTRIBUTE_ESCAPES[ch] as string);
}

/** The failure's one-line message: the first error, and how many more there are. */
function failureMessage(errors: readonly Diagnostic[]): string {
  const first = errors[0] as Diagnostic;
  const more = errors.length - 1;
  return singleLine(first.message) + (more > 0 ? ` (and ${plural(more, "more error")})` : "");
}

function testCase(r: FileResult): string[] {
  const attrs = `classname="${xmlAttribute(r.file)}" name="manifest validation" file="${xmlAttribute(r.file)}"`;
  const errors = r.diagnostics.filter((d) => d.severity === "error");
  const others = r.diagnostics.filter((d) => d.severity !== "error");
  if (errors.length === 0 && others.length === 0) return [`    <testcase ${attrs}/>`];
  const out = [`    <testcase ${attrs}>`];
  if (errors.length) {
    const type = (errors[0] as Diagnostic).rule;
    const body = errors.map((d) => compactLine(r.file, d)).join("\n");
    out.push(`      <failure message="${xmlAttribute(failureMessage(errors))}" type="${xmlAttribute(type)}">${xmlText(body)}</failure>`);
  }
  if (others.length) out.push(`      <system-out>${xmlText(others.map((d) => compactLine(r.file, d)).join("\n"))}</system-out>`);
  out.push("    </testcase>");
  return out;
}

export function formatJunit(results: readonly FileResult[]): string {
  const failures = results.filter((r) => r.diagnostics.some((d) => d.severity === "error")).length;
  const counts = `tests="${results.length}" failures="${failures}" errors="0"`;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="pulse-validate" ${counts}>`,
    `  <testsuite name="pulse-validate" ${counts} skipped="0">`,
    ...results.flatMap(testCase),
    "  </testsuite>",
    "</testsuites>",
    "",
  ].join("\n");
}
