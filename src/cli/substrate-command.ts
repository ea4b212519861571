/**
 * `pulse substrate serve`: the in-memory substrates served over the HTTP substrate protocol
 * (docs/substrates-http.md), so a runtime in another process or language, curl, or a manifest
 * with `http://` substrate URIs has something to talk to. Loopback by default; any other address
 * requires a bearer token, since the substrates hold a loop's memory, policy and audit trail.
 */
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { createSubstrateServer, inMemorySubstrates, type PolicyRule } from "../../adapters/index.js";
import { SLOT_NAMES } from "../../adapters/http/protocol.js";
import type { SubstrateSlotName } from "../substrates/contracts.js";
import { UsageError, EXIT } from "./exit-codes.js";
import type { CliIO } from "./io.js";
import { bearerAuthorized, refuseUnauthorized } from "../transports/bearer.js";
import { guardRequest, listenerGuard } from "../transports/listener-guard.js";
import { parseCount } from "./inputs.js";
import type { SubstrateServeOptions } from "./substrate-options.js";

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|localhost)$/;

export async function runSubstrateServe(opts: SubstrateServeOptions, io: CliIO, stop: { onStop: (fn: () => void) => void }): Promise<number> {
  const port = parseCount("--port", opts.port ?? "8080") as number;
  if (port > 65535) throw new UsageError(`--port ${port} is not a port (0-65535)`);
  const host = opts.host ?? "127.0.0.1";
  const token = opts.token ?? (io.env.PULSE_SUBSTRATE_TOKEN || undefined);
  if (!LOOPBACK.test(host) && !token) {
    throw new UsageError(`listening on ${host} exposes the substrates to other machines: set a token with --token or PULSE_SUBSTRATE_TOKEN (or keep the default --host 127.0.0.1)`);
  }
  const slots = parseSlots(opts.slots);
  const policyRules = (opts.policyRule ?? []).map(parseRule);
  let all: ReturnType<typeof inMemorySubstrates>;
  try {
    all = inMemorySubstrates({ policyRules });
  } catch (e) {
    throw new UsageError(`--policy-rule: ${(e as Error).message}`);
  }
  const served = Object.fromEntries(slots.map((slot) => [slot, all[slot]]));
  const substrates = createSubstrateServer(served);
  const guarded = createServer((req, res) => {
    // Host and Origin first: a web page must not read or write a loop's memory through a loopback port.
    if (guardRequest(guard, req, res)) return;
    if (!token || isHealth(req) || bearerAuthorized(req, token)) {
      substrates.server.emit("request", req, res);
      return;
    }
    refuseUnauthorized(res);
  });
  const guard = listenerGuard(guarded);
  const url = await new Promise<string>((resolve, reject) => {
    guarded.once("error", (e: NodeJS.ErrnoException) =>
      reject(e.code === "EADDRINUSE" ? new UsageError(`port ${port} on ${host} is already in use (try --port 0 for a free one)`) : e.code === "EADDRNOTAVAIL" ? new UsageError(`${host} is not an address of this machine`) : e),
    );
    guarded.listen(port, host, () => {
      const address = guarded.address() as AddressInfo;
      resolve(`http://${address.family === "IPv6" ? `[${address.address}]` : address.address}:${address.port}`);
    });
  });
  io.stdout(`serving in-memory substrates ${slots.join(", ")} at ${url} (${token ? "bearer token required; " : ""}Ctrl-C stops)\n`);
  await new Promise<void>((resolve) => {
    stop.onStop(resolve);
    if (opts.duration !== undefined) setTimeout(resolve, Number(parseCount("--duration", opts.duration)) * 1000).unref();
  });
  await new Promise<void>((resolve) => {
    guarded.close(() => resolve());
    guarded.closeAllConnections();
  });
  await substrates.close();
  return EXIT.ok;
}

function parseSlots(list: string | undefined): SubstrateSlotName[] {
  if (list === undefined) return [...SLOT_NAMES];
  const slots = list.split(",").map((s) => s.trim()).filter(Boolean);
  const unknown = slots.filter((s) => !(SLOT_NAMES as readonly string[]).includes(s));
  if (unknown.length > 0 || slots.length === 0) throw new UsageError(`--slots takes ${SLOT_NAMES.join(", ")}${unknown.length ? `, not ${unknown.join(", ")}` : ""}`);
  return slots as SubstrateSlotName[];
}

function parseRule(text: string): PolicyRule {
  let rule: unknown;
  try {
    rule = JSON.parse(text);
  } catch {
    throw new UsageError(`--policy-rule takes a JSON object such as '{"actor": "agent_7", "action": "write", "decision": "deny"}', not ${JSON.stringify(text.slice(0, 60))}`);
  }
  if (rule === null || typeof rule !== "object" || Array.isArray(rule)) throw new UsageError("--policy-rule takes a JSON object");
  return rule as PolicyRule;
}

function isHealth(req: IncomingMessage): boolean {
  return (req.method === "GET" || req.method === "HEAD") && (req.url ?? "").split("?")[0] === "/v1/health";
}
