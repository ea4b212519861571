/**
 * `pulse-diagram` / `pulse diagram`: read manifests, refuse invalid ones with the validator's
 * diagnostics, build one graph model, render it, write it. A function of its options and a
 * CliIO, so tests run it in-process.
 */
import { extname, resolve } from "node:path";
import type { FileResult } from "../validator/diagnostic.js";
import { validateSources } from "../validator/validate.js";
import { compactLine } from "../format/compact.js";
import { DEFAULT_MAX_BYTES } from "../source/load.js";
import { buildGraph } from "../diagram/build.js";
import type { DiagramCliOptions } from "../diagram/cli-options.js";
import { EXTENSION_FORMATS, type DiagramFormat, type Layout, type SubstrateMode } from "../diagram/model.js";
import { renderDiagram } from "../diagram/render.js";
import { parseCount, readManifestSources, writeAtomically } from "./inputs.js";
import { EXIT, UsageError } from "./exit-codes.js";
import type { CliIO } from "./io.js";
import { VERSION } from "../version.js";

/**
 * Errors the diagram draws rather than refuses: a connection or signal source naming a phase
 * that the target loop, loaded beside it, lacks. Everything else the validator calls an error
 * makes the manifest invalid, and an invalid manifest is not drawn.
 */
const DRAWN_RULES = new Set(["pulse/connection-unresolved", "pulse/signal-source-unresolved"]);

export function chooseFormat(format: string | undefined, output: string | undefined): DiagramFormat {
  if (format !== undefined) return format as DiagramFormat;
  if (output === undefined) return "mermaid";
  const ext = extname(output).toLowerCase();
  const inferred = Object.hasOwn(EXTENSION_FORMATS, ext) ? EXTENSION_FORMATS[ext] : undefined;
  if (!inferred) {
    const known = Object.keys(EXTENSION_FORMATS).join(", ");
    throw new UsageError(`cannot tell the format from "${output}"${ext ? ` (${ext})` : ""}: use one of ${known}, or pass --format`);
  }
  return inferred;
}

function errorLines(results: readonly FileResult[], keep: (rule: string) => boolean): string[] {
  return results.flatMap((r) => r.diagnostics.filter((d) => d.severity === "error" && keep(d.rule)).map((d) => compactLine(r.file, d)));
}

export async function runDiagram(operands: readonly string[], opts: DiagramCliOptions, io: CliIO): Promise<number> {
  const depth = parseCount("--depth", opts.depth);
  const maxBytes = parseCount("--max-file-size", opts.maxFileSize) ?? DEFAULT_MAX_BYTES;
  const format = chooseFormat(opts.format, opts.output);
  const sources = await readManifestSources(operands, opts.stdinFilename, io, maxBytes);

  const results = validateSources(sources);
  const refusals = errorLines(results, (rule) => !DRAWN_RULES.has(rule));
  if (refusals.length > 0) {
    const invalid = results.filter((r) => r.diagnostics.some((d) => d.severity === "error" && !DRAWN_RULES.has(d.rule))).length;
    io.stderr(errorLines(results, () => true).join("\n") + "\n");
    io.stderr(`pulse-diagram: refused: ${invalid} of ${results.length} manifest${results.length === 1 ? " is" : "s are"} invalid; nothing was drawn (pulse-validate shows every diagnostic)\n`);
    return EXIT.problems;
  }

  const graph = buildGraph(
    sources.map((s) => ({ file: s.file, manifest: s.value })),
    depth === undefined ? { substrates: (opts.substrates ?? "referenced") as SubstrateMode } : { substrates: (opts.substrates ?? "referenced") as SubstrateMode, depth },
  );
  const text = await renderDiagram(graph, format, (opts.layout ?? "lr") as Layout, `pulse-diagram ${VERSION}`);
  if (opts.output !== undefined) await writeAtomically(resolve(io.cwd, opts.output), opts.output, text);
  else io.stdout(text);

  const dangling = errorLines(results, (rule) => DRAWN_RULES.has(rule));
  if (dangling.length > 0) {
    io.stderr(dangling.join("\n") + "\n");
    io.stderr(`pulse-diagram: drew ${dangling.length} dangling reference${dangling.length === 1 ? "" : "s"} as "phase not found"\n`);
  }
  return EXIT.ok;
}
