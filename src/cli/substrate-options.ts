/** `pulse substrate serve`'s options and help, apart from the server so `pulse --help` stays light. */
import type { Command } from "commander";

const SLOTS = "memory,policy,audit,auth,time";

export interface SubstrateServeOptions {
  port?: string;
  host?: string;
  token?: string;
  slots?: string;
  policyRule?: string[];
  duration?: string;
}

export const SUBSTRATE_SERVE_DESCRIPTION = "Serve the in-memory substrates (memory, policy, audit, auth, time) over the HTTP substrate protocol of docs/substrates-http.md.";

export const SUBSTRATE_SERVE_HELP = `
Every request but GET /v1/health must carry "Authorization: Bearer <token>" when a token is set
(--token or PULSE_SUBSTRATE_TOKEN); one is required to listen on anything but loopback.
Substrate URIs for a manifest, or httpSubstrates(url) in a program, take the printed URL.

Examples:
  pulse substrate serve --port 8080
  pulse substrate serve --port 8080 --policy-rule '{"actor": "agent_7", "action": "write", "decision": "deny", "reason": "agent_7 is read-only"}'
  PULSE_SUBSTRATE_TOKEN=s3cret pulse substrate serve --host 0.0.0.0 --port 8080`;

export function addSubstrateServeOptions(cmd: Command): Command {
  const collect = (value: string, previous: string[]) => [...previous, value];
  return cmd
    .option("-p, --port <port>", "port to listen on (0 picks a free one)", "8080")
    .option("--host <address>", "address to listen on", "127.0.0.1")
    .option("--token <token>", "require this bearer token (default: PULSE_SUBSTRATE_TOKEN); required off loopback")
    .option("--slots <list>", `slots to serve, comma-separated (default: all: ${SLOTS})`)
    .option("--policy-rule <json>", "a policy rule for the in-memory policy substrate, as JSON; repeatable", collect, [])
    .option("--duration <seconds>", "stop after this many seconds (default: until Ctrl-C)");
}

