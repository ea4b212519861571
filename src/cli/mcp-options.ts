/** `pulse mcp`'s options and help, apart from the command so `pulse --help` stays light. */
import { Option, type Command } from "commander";

export interface McpCliOptions {
  style?: "per-phase" | "grouped";
  stdio?: boolean;
  http?: string;
  token?: string;
  store?: string;
  workspace?: string;
  allowHost?: string[];
  allowOrigin?: string[];
}

export const MCP_DESCRIPTION = "Serve loops as MCP tools (spec §14): one tool per phase, or the five kind tools with an action.";

export const MCP_HELP = `
Operands: manifests, directories or globs; their loops are hosted (recording handlers, the
store's state) and run only when a tool is called: no cadence fires on its own.

Styles (both conformant, §14):
  --style grouped     retrieve, route, act, learn, consolidate (and each custom kind), each
                      taking {action: <phase_id>, input, workspace?, trace_id?, agent_id?}
  --style per-phase   pulse_<loop_id>_<phase_id> (dots as underscores), each taking {input, …}
Either way also pulse_iterate {loop, input?} (one whole iteration) and pulse_loop_status.
A tool's input schema comes from the phase's inputs.schema (the §6 token's JSON Schema).
Calls run through the runtime: invariants, signatures, idempotent replays, audit events in the
store; calls with the same trace_id belong to one iteration.

Transports: --stdio (the default), or --http [host:]port (Streamable HTTP at /mcp, stateless;
127.0.0.1 unless a host is given, which needs --token; Host and Origin checked as pulse serve does).`;

const collect = (value: string, previous: string[] = []) => [...previous, value];

export function addMcpOptions(cmd: Command): Command {
  return cmd
    .argument("[paths...]", "manifests, directories or globs")
    .addOption(new Option("--style <style>", "tool style").choices(["per-phase", "grouped"]).default("grouped"))
    .option("--stdio", "serve over standard input and output (the default)")
    .option("--http <[host:]port>", "serve Streamable HTTP at /mcp on this port instead")
    .option("--token <token>", "with --http: bearer token clients must send (default $PULSE_TOKEN); required off loopback")
    .option("--store <spec>", "where state is kept: sqlite:PATH, postgres://…?schema=name, or memory: (default $PULSE_STORE, else sqlite:.pulse/pulse.db)")
    .option("-w, --workspace <id>", "the workspace calls run in unless they name one", "default")
    .option("--allow-host <name>", "with --http: also accept this Host name (repeatable)", collect)
    .option("--allow-origin <origin>", "with --http: also accept web pages of this origin (repeatable)", collect);
}
