#!/usr/bin/env node
import { Command } from "commander";
import { addDiagramOptions, DIAGRAM_DESCRIPTION, DIAGRAM_HELP, type DiagramCliOptions } from "../diagram/cli-options.js";
import { runDiagram } from "./diagram-command.js";
import { runProgram, setExitCode } from "./main.js";
import { processIO } from "./io.js";
import { VERSION } from "../version.js";

const io = processIO("pulse-diagram");
const program = addDiagramOptions(new Command("pulse-diagram"))
  .description(DIAGRAM_DESCRIPTION)
  .version(VERSION, "-V, --version")
  .addHelpText("after", DIAGRAM_HELP)
  .action(async (paths: string[], opts: DiagramCliOptions, cmd: Command) => {
    setExitCode(cmd, await runDiagram(paths, opts, io));
  });

process.exitCode = await runProgram(program, process.argv.slice(2), io, "pulse-diagram");
