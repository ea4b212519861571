/**
 * `pulse session …` on its own: the session commands under a program that registers nothing
 * else, so listing sessions does not load the validator, the runtime or the other commands.
 */
import { Command } from "commander";
import { runProgram } from "./main.js";
import { processIO } from "./io.js";
import { VERSION } from "../version.js";

export const SESSION_DESCRIPTION = "Autonomous coding sessions: an agent iterating on a goal in a git repository (pulse session --help).";

export async function main(): Promise<void> {
  const io = processIO("pulse");
  const program = new Command("pulse").version(VERSION, "-V, --version");
  const { addSessionCommands } = await import("./session-command.js");
  addSessionCommands(program.command("session"), io);
  process.exitCode = await runProgram(program, process.argv.slice(2), io, "pulse");
}
