#!/usr/bin/env node
import { Command } from "commander";
import { addValidateOptions, runValidate, VALIDATE_DESCRIPTION, VALIDATE_HELP, type ValidateCliOptions } from "./validate-command.js";
import { runProgram, setExitCode } from "./main.js";
import { processIO } from "./io.js";
import { VERSION } from "../version.js";

const io = processIO("pulse-validate");
const program = addValidateOptions(new Command("pulse-validate"))
  .description(VALIDATE_DESCRIPTION)
  .version(VERSION, "-V, --version")
  .addHelpText("after", VALIDATE_HELP)
  .action(async (paths: string[], opts: ValidateCliOptions, cmd: Command) => {
    setExitCode(cmd, await runValidate(paths, opts, io));
  });

process.exitCode = await runProgram(program, process.argv.slice(2), io, "pulse-validate");
