/**
 * The options of `pulse-diagram` and `pulse diagram`. Kept apart from the command itself so
 * that `pulse` can declare the subcommand without loading the diagram code (it is imported
 * when the subcommand runs).
 */
import { Option, type Command } from "commander";
import { DEFAULT_MAX_BYTES } from "../source/load.js";
import { DIAGRAM_FORMATS, LAYOUTS, SUBSTRATE_MODES } from "./model.js";

export interface DiagramCliOptions {
  format?: string;
  output?: string;
  layout?: string;
  substrates?: string;
  depth?: string;
  stdinFilename?: string;
  maxFileSize?: string;
}

export const DIAGRAM_DESCRIPTION = "Draw PULSE loop manifests as a topology diagram: phases, closure, cadence, substrates, inner loops and connections between loops.";

export const DIAGRAM_HELP = `
Operands:
  files, directories (searched recursively for .json, .jsonc, .yaml, .yml), quoted globs, or -
  for stdin. Manifests given together are drawn as one system: inner loops nest inside their
  parents and connections join the loops.

Formats (--format, or from the extension of -o):
  mermaid  .mmd .mermaid   renders in GitHub Markdown (default without -o)
  dot      .dot .gv        Graphviz source
  svg      .svg            rendered with Graphviz (wasm), no browser needed
  html     .html .htm      one self-contained page: SVG, legend, loop tables, Mermaid source
  json     .json           the graph model (docs/diagrams.md)

Exit codes:
  0  drawn; a connection or signal naming a phase that another given loop lacks is drawn as
     "phase not found" and listed on stderr
  1  refused: a manifest is invalid (the validator's diagnostics are printed on stderr)
  2  usage error: bad flag, no file matched, unreadable file, unknown -o extension
  3  internal error

Examples:
  pulse-diagram manifests/ -o system.svg
  pulse-diagram manifests/prism.benchmark.yaml --layout ring -o prism.html
  pulse-diagram manifests/ --depth 0 --substrates none > system.mmd`;

export function addDiagramOptions(cmd: Command): Command {
  return cmd
    .argument("[paths...]", "files, directories, globs, or - for stdin")
    .addOption(new Option("-f, --format <format>", "output format (default: from the -o extension, else mermaid)").choices([...DIAGRAM_FORMATS]))
    .option("-o, --output <file>", "write the diagram to a file (atomically) instead of stdout")
    .addOption(new Option("--layout <layout>", "left to right, top to bottom, or a single loop as a ring (Graphviz circo)").choices([...LAYOUTS]).default("lr"))
    .addOption(new Option("--substrates <mode>", "draw no substrates, those phases reference, or every bound one").choices([...SUBSTRATE_MODES]).default("referenced"))
    .option("--depth <n>", "collapse inner loops nested deeper than n (0: outermost loops only)")
    .option("--stdin-filename <name>", "name (and format, by extension) of the manifest read from stdin")
    .option("--max-file-size <bytes>", `refuse manifests larger than this (default ${DEFAULT_MAX_BYTES})`);
}
