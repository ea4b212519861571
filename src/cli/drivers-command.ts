/**
 * `pulse drivers`: the agent drivers a loop can use, whether each preset's CLI is installed,
 * its version, and whether its `--help` still shows the flags the preset passes (drift is a
 * warning, never a failure: CLIs rename flags between releases).
 */
import type { Command } from "commander";
import type { ProbeReport } from "../../adapters/agents/cli/probe.js";
import { EXIT, UsageError } from "./exit-codes.js";
import type { CliIO } from "./io.js";

export interface DriversCliOptions {
  json?: boolean;
  config?: string;
}

export const DRIVERS_DESCRIPTION = "List the agent drivers: CLI presets (installed? version? flag drift), openai and scripted.";

export const DRIVERS_HELP = `
Each CLI preset runs one agent CLI headless (claude, codex, gemini, qwen, opencode, goose,
aider, and your own from --config or PULSE_AGENTS_CONFIG). For each, pulse looks the command up
on PATH, asks its --version, and reads its --help for every flag the preset passes: a flag the
help no longer shows is reported as drift (a warning; exit code stays 0).

Besides the presets: "openai" (any OpenAI-compatible /v1/chat/completions endpoint, with tools
run by pulse) and "scripted" (a script of steps, for tests and demos). docs/agents.md has the
config file format.

Exit codes: 0 listed (drift and missing CLIs are warnings); 2 usage error or a bad config file.`;

export function addDriversOptions(cmd: Command): Command {
  return cmd.option("--json", "print the report as JSON").option("--config <file>", "a YAML/JSON file of user presets (default: $PULSE_AGENTS_CONFIG)");
}

interface Row extends ProbeReport {
  description: string;
  source: string;
  format: string;
  endpoint?: string;
}

export async function runDrivers(opts: DriversCliOptions, io: CliIO): Promise<number> {
  // Loaded when the command runs, so other subcommands do not pay for the drivers.
  const [{ AgentsConfigError }, { probePreset }, { availablePresets }] = await Promise.all([import("../../adapters/agents/cli/preset-config.js"), import("../../adapters/agents/cli/probe.js"), import("../../adapters/agents/create-driver.js")]);
  let presets;
  try {
    presets = availablePresets(opts.config, io.env);
  } catch (e) {
    if (e instanceof AgentsConfigError) throw new UsageError(e.message);
    throw e;
  }
  const rows: Row[] = await Promise.all(
    Object.values(presets).map(async (c) => {
      const report = await probePreset(c.preset, io.env);
      const row: Row = { ...report, description: c.preset.description, source: c.source, format: c.preset.format };
      if (c.endpoint) row.endpoint = c.endpoint.baseUrl;
      return row;
    }),
  );
  if (opts.json) {
    io.stdout(JSON.stringify({ presets: rows, builtin: [{ name: "openai", description: "OpenAI-compatible /v1/chat/completions, tools run by pulse" }, { name: "scripted", description: "a script of steps (tests and demos)" }] }, null, 2) + "\n");
    return EXIT.ok;
  }
  const table = [["driver", "command", "installed", "version", "flags"], ...rows.map((r) => [r.preset, r.command, r.path ? "yes" : "no", r.version ?? "-", !r.path ? "-" : !r.helpRead ? "unchecked" : r.missingFlags.length ? `DRIFT (${r.missingFlags.length})` : "ok"])];
  const widths = table[0]!.map((_, i) => Math.max(...table.map((row) => row[i]!.length)));
  for (const row of table) io.stdout(row.map((cell, i) => cell.padEnd(widths[i]!)).join("  ").trimEnd() + "\n");
  io.stdout(`openai    OpenAI-compatible chat completions (OPENAI_BASE_URL and OPENAI_MODEL, or an endpoint in --config); tools run by pulse\nscripted  a script of steps (--script FILE), for tests and demos\n`);
  const warnings = rows.flatMap((r) => r.warnings);
  for (const w of warnings) io.stderr(`warning: ${w}\n`);
  const missing = rows.filter((r) => !r.path).map((r) => r.preset);
  if (missing.length) io.stderr(`note: not installed: ${missing.join(", ")} (install the CLI, or define your own preset with --config)\n`);
  return EXIT.ok;
}
