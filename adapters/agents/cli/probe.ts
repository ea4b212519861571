/**
 * What `pulse drivers` reports for a preset: whether its CLI is installed (on PATH), its
 * version, and whether its `--help` still shows every flag the preset uses. A flag that
 * disappeared is drift: a warning, never a crash (CLIs rename flags between releases).
 */
import { accessSync, constants, statSync } from "node:fs";
import { delimiter, isAbsolute, join } from "node:path";
import { buildEnv } from "./env.js";
import { presetFlags, type CliPreset } from "./preset.js";
import { runProcess } from "./run-process.js";

export interface ProbeReport {
  preset: string;
  command: string;
  /** Absolute path found on PATH, or undefined when not installed. */
  path?: string;
  version?: string;
  /** Flags the preset uses that `--help` no longer shows. */
  missingFlags: string[];
  /** Whether the help could be read at all. */
  helpRead: boolean;
  warnings: string[];
}

export function findOnPath(command: string, pathVar: string | undefined): string | undefined {
  const candidates = isAbsolute(command) || command.includes("/") ? [command] : (pathVar ?? "").split(delimiter).filter(Boolean).map((d) => join(d, command));
  for (const c of candidates) {
    try {
      accessSync(c, constants.X_OK);
      if (statSync(c).isFile()) return c;
    } catch {
      // not here
    }
  }
  return undefined;
}

export async function probePreset(preset: CliPreset, env: Readonly<Record<string, string | undefined>> = process.env, timeoutMs = 20_000): Promise<ProbeReport> {
  const report: ProbeReport = { preset: preset.name, command: preset.command, missingFlags: [], helpRead: false, warnings: [] };
  const path = findOnPath(preset.command, env.PATH);
  if (!path) return report;
  report.path = path;
  const childEnv = buildEnv({ parent: env, passThrough: [], set: {}, cwd: process.cwd() });
  const run = (args: string[]) => runProcess({ command: path, args, cwd: process.cwd(), env: childEnv, timeoutMs, killGraceMs: 1000, pipeGraceMs: 500, maxOutputBytes: 1 << 20 });
  const [version, help] = await Promise.all([run(["--version"]), run(preset.help ?? ["--help"])]);
  if (version.reason === "exited" && version.code === 0) report.version = (version.stdout.trim() || version.stderr.trim()).split("\n")[0]!.slice(0, 80);
  const text = `${help.stdout}\n${help.stderr}`;
  if (help.reason !== "exited" || !/-{1,2}[a-z]/i.test(text)) {
    report.warnings.push(`${preset.name}: could not read \`${preset.command} ${(preset.help ?? ["--help"]).join(" ")}\` (${help.reason === "exited" ? `exit ${help.code}` : help.reason}): flags not checked`);
    return report;
  }
  report.helpRead = true;
  report.missingFlags = presetFlags(preset).filter((flag) => !new RegExp(`(^|[\\s,\\[(|])${flag.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(?=[\\s,=\\[\\]<)|]|$)`, "m").test(text));
  for (const flag of report.missingFlags) report.warnings.push(`${preset.name}: \`${preset.command} ${(preset.help ?? ["--help"]).join(" ")}\` no longer shows ${flag}, which the preset uses (flag drift: the CLI may have renamed it)`);
  return report;
}
