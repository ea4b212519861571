/** `pulse studio`'s options and help, apart from the command so `pulse --help` stays light. */
import type { Command } from "commander";
import { isLoopback } from "../transports/loopback.js";
import { parseHost } from "../transports/listener-guard.js";
import { UsageError } from "./exit-codes.js";

export interface StudioCliOptions {
  port?: string;
  host?: string;
  token?: string;
  store?: string;
  profile?: string;
  workspace?: string;
  kickoff?: boolean;
  allowHost?: string[];
  allowOrigin?: string[];
  agentHome?: string;
  root?: string[];
}

export const STUDIO_DESCRIPTION = "Host loops and watch and steer them, and the coding runs of a store, in a local web app.";

export const STUDIO_HELP = `
Operands: manifests, directories or globs, hosted as pulse run hosts them (recording handlers,
the store's state, each loop iterating once at start unless --no-kickoff). With none, the studio
shows only the coding runs (sessions) recorded in the store.

Open the printed address in a browser. Views: System (the loops' diagram with live status),
Loop (a live timeline of iterations, telemetry, circuits; pause, resume, stop, trigger), Trace
(one iteration by trace id), Coding runs (sessions: spend, gates, budgets; pause, resume with a
raised budget, abort), Conformance (open a pulse-conform report), and Agent (seed 002's Studio
for pulse agent: threads, settings, guides, knowledge and actions of --agent-home; the paths it
is sent must lie under a --root).

It listens on 127.0.0.1 unless --host names another address; then a bearer token is required
(--token, $PULSE_TOKEN, or one made up and printed at start) and the printed address carries it.
Requests whose Host is not a name of the listener, or whose Origin is another site's, are
refused (403); --allow-host and --allow-origin widen that on purpose. See docs/studio.md.`;

const collect = (value: string, previous: string[] = []) => [...previous, value];

export function addStudioOptions(cmd: Command): Command {
  return cmd
    .argument("[paths...]", "manifests, directories or globs to host")
    .option("--port <n>", "port to listen on (0: any free port)", "7400")
    .option("--host <address>", "address to listen on (anything but loopback needs a token)", "127.0.0.1")
    .option("--token <token>", "bearer token the API requires (default $PULSE_TOKEN; made up and printed when --host is not loopback)")
    .option("--store <spec>", "where state is kept and sessions are read: a SQLite file (default $PULSE_STORE or .pulse/pulse.db), postgres://…?schema=name, or memory:")
    .option("--profile <file>", "the session profile (default profiles/coding/session.profile.json)")
    .option("-w, --workspace <id>", "workspace the loops run in", "default")
    .option("--no-kickoff", "do not run every loop once at start: wait for cadences only")
    .option("--allow-host <name>", "also accept requests addressed to this host name (name or name:port; repeatable)", collect)
    .option("--allow-origin <origin>", "also accept requests from web pages of this origin (repeatable)", collect)
    .option("--agent-home <dir>", "the agent's home the Agent pages work on (default $PULSE_AGENT_HOME, else ~/.pulse/agent)")
    .option("--root <dir>", "a directory the Agent pages may point threads and files at (repeatable; default the current directory)", collect);
}

export function parsePort(text: string | undefined): number {
  const t = text ?? "7400";
  if (!/^\d{1,5}$/.test(t) || Number(t) > 65535) throw new UsageError(`--port takes a port from 0 to 65535 (0: any free port), not ${JSON.stringify(t)}`);
  return Number(t);
}

export function parseListenHost(text: string | undefined): { host: string; loopback: boolean } {
  const host = (text ?? "127.0.0.1").trim().replace(/^\[|\]$/g, "");
  if (!parseHost(host.includes(":") ? `[${host}]` : host)) throw new UsageError(`--host takes an address or host name, e.g. 127.0.0.1 or 0.0.0.0, not ${JSON.stringify(text)}`);
  return { host, loopback: isLoopback(host) };
}
