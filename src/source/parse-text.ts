/**
 * `parseSourceText`: a manifest's text, JSON or YAML, parsed synchronously with positions. The
 * library's entry point; it loads the YAML parser with the module, so nothing needs to be
 * initialised first (the CLI reads files through load.ts, which loads YAML only when needed).
 */
import { parseJsonc } from "./jsonc.js";
import { formatForFile, sniffFormat, sourceFromText, type ManifestSource, type SourceFormat } from "./load.js";
import { parseYaml } from "./yaml-source.js";

/** `format` defaults to the file name's extension, else what the text looks like. */
export function parseSourceText(file: string, text: string, format: SourceFormat = formatForFile(file) ?? sniffFormat(text)): ManifestSource {
  return sourceFromText(file, text, format, format === "json" ? parseJsonc : parseYaml);
}
