/**
 * The common edge of every bin: commander's errors become usage errors (exit 2), our own
 * UsageError prints one line, and anything unexpected is an internal error (exit 3) with the
 * stack only under PULSE_DEBUG=1. No user ever sees a stack trace for bad input.
 */
import { CommanderError, type Command } from "commander";
import { EXIT, UsageError } from "./exit-codes.js";
import type { CliIO } from "./io.js";
import { StoreError } from "../store/contracts.js";

export async function runProgram(program: Command, argv: readonly string[], io: CliIO, name: string, codes: { usage: number; internal: number } = EXIT): Promise<number> {
  let exitCode: number = EXIT.ok;
  // Subcommands copy these settings only when created after them: set them on every command, or
  // `pulse run --bogus` exits through commander's own process.exit(1).
  for (const command of commandTree(program)) {
    command.exitOverride();
    command.configureOutput({
      writeOut: (s) => io.stdout(s),
      writeErr: (s) => io.stderr(s),
      outputError: (s, write) => write(s.startsWith("error:") ? `${name}: ${s}` : s),
    });
    command.showSuggestionAfterError(true);
  }
  try {
    await program.parseAsync([...argv], { from: "user" });
    exitCode = (program as Command & { pulseExitCode?: number }).pulseExitCode ?? EXIT.ok;
  } catch (e) {
    if (e instanceof CommanderError) {
      // --help and --version end through here with exit code 0.
      return e.exitCode === 0 ? EXIT.ok : codes.usage;
    }
    if (e instanceof UsageError) {
      io.stderr(`${name}: ${e.message}\n`);
      return codes.usage;
    }
    // A store that fails (damaged, locked, full) where a command did not expect it: still one line, exit 1.
    if (e instanceof StoreError) {
      io.stderr(`${name}: ${e.message}\n`);
      return EXIT.problems;
    }
    const err = e as Error;
    io.stderr(`${name}: internal error: ${err?.message ?? String(e)}\n`);
    io.stderr(io.env.PULSE_DEBUG ? `${err?.stack ?? ""}\n` : "  (set PULSE_DEBUG=1 for the stack trace, and please report it)\n");
    return codes.internal;
  }
  return exitCode;
}

function commandTree(command: Command): Command[] {
  return [command, ...command.commands.flatMap((c) => commandTree(c))];
}

/** Commands record their exit code here; commander's action return value is discarded. */
export function setExitCode(program: Command, code: number): void {
  let root = program;
  while (root.parent) root = root.parent;
  (root as Command & { pulseExitCode?: number }).pulseExitCode = code;
}
