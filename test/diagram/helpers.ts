import { runBin, type Bin } from "../cli/run-bin.js";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, relative, resolve } from "node:path";
import { Command } from "commander";
import { expect } from "vitest";
import { addDiagramOptions, type DiagramCliOptions } from "../../src/diagram/cli-options.js";
import { runDiagram } from "../../src/cli/diagram-command.js";
import { runProgram, setExitCode } from "../../src/cli/main.js";
import type { CliIO } from "../../src/cli/io.js";
import { buildGraph } from "../../src/diagram/build.js";
import type { DiagramGraph, GraphOptions } from "../../src/diagram/model.js";
import { readSource } from "../../src/source/load.js";
import { expandOperands } from "../../src/cli/expand-paths.js";

export const ROOT = resolve(import.meta.dirname, "../..");
export const GOLDEN_DIR = resolve(ROOT, "test/fixtures/diagram");
export const UPDATE_HINT = "UPDATE_GOLDEN=1 npx vitest run test/diagram";

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** `pulse-diagram ARGS`, in-process, with the bin's own option wiring. */
export async function diagram(args: string[], options: { cwd?: string; stdin?: string } = {}): Promise<Run> {
  let stdout = "";
  let stderr = "";
  const io: CliIO = {
    stdout: (t) => void (stdout += t),
    stderr: (t) => void (stderr += t),
    readStdin: async () => Buffer.from(options.stdin ?? ""),
    env: {},
    stdoutIsTTY: false,
    cwd: options.cwd ?? ROOT,
  };
  const program = addDiagramOptions(new Command("pulse-diagram")).action(async (paths: string[], opts: DiagramCliOptions, cmd: Command) => {
    setExitCode(cmd, await runDiagram(paths, opts, io));
  });
  const code = await runProgram(program, args, io, "pulse-diagram");
  return { code, stdout, stderr };
}

/** A shipped bin, as built by `npm run build`. */
export function runBuiltBin(bin: Bin, args: string[], cwd = ROOT): Run {
  const r = runBin(bin, args, { cwd });
  return { code: r.code ?? -1, stdout: r.stdout, stderr: r.stderr };
}

/** The graph of files, directories or globs, read as the CLI reads them. */
export async function graphOf(operands: string[], options: GraphOptions = {}): Promise<DiagramGraph> {
  const { files } = await expandOperands(operands, ROOT);
  const sources = await Promise.all(files.map(async (f) => ({ ...(await readSource(resolve(ROOT, f))), file: f })));
  return buildGraph(
    sources.map((s) => ({ file: s.file, manifest: s.value })),
    options,
  );
}

/**
 * Compares output with a committed file. The file is only ever written when UPDATE_GOLDEN=1
 * is set: a missing or different golden fails the test, so a change in output is a decision
 * someone makes and reviews, never a side effect of running the tests.
 */
export function expectGolden(file: string, actual: string, env: Readonly<Record<string, string | undefined>> = process.env): void {
  const shown = relative(ROOT, file);
  if (env.UPDATE_GOLDEN === "1") {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, actual);
    return;
  }
  if (!existsSync(file)) throw new Error(`golden file ${shown} does not exist; create it deliberately with ${UPDATE_HINT}`);
  expect(actual, `${shown} differs from the output; if the change is intended, regenerate with ${UPDATE_HINT} and review the diff`).toBe(readFileSync(file, "utf8"));
}
