/**
 * What runs inside an action's process, written into the action run's folder as plain ESM:
 * `guard.mjs` turns the network off for Node code (sockets, DNS, UDP, fetch) unless the action
 * is tagged `network`; `harness.mjs` loads `perform.js` (CommonJS or ESM), hands `Perform` a
 * narrow agent handle (log to the report, read the run's files, nothing else) and writes the
 * result for pulse to read.
 */

export const GUARD_SOURCE = `
import net from "node:net";
import dns from "node:dns";
import dgram from "node:dgram";
const refuse = () => { const e = new Error("network is off for this action (tag it \\"network\\" in meta.json to allow it)"); e.code = "EACCES"; throw e; };
net.Socket.prototype.connect = function () { refuse(); };
dns.lookup = refuse;
dns.resolve = refuse;
if (dns.promises) { dns.promises.lookup = async () => refuse(); dns.promises.resolve = async () => refuse(); }
dgram.createSocket = refuse;
globalThis.fetch = async () => refuse();
`;

export const HARNESS_SOURCE = `
import { appendFileSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { isAbsolute, join, relative, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { createRequire } from "node:module";
const runDir = process.argv[process.argv.length - 1];
const request = JSON.parse(readFileSync(join(runDir, "request.json"), "utf8"));
const real = (p) => { try { return realpathSync(p); } catch { return resolve(p); } };
const allowed = new Set(request.files.map(real));
const inside = (p) => { const r = relative(real(runDir), real(p)); return r && !r.startsWith("..") && !isAbsolute(r); };
const agent = Object.freeze({
  runId: request.runId,
  actionRunId: request.actionRunId,
  workdir: process.cwd(),
  files: Object.freeze([...request.files]),
  log(message, data) {
    appendFileSync(join(runDir, "logs.jsonl"), JSON.stringify({ ts: new Date().toISOString(), message: String(message), ...(data === undefined ? {} : { data }) }) + "\\n");
  },
  readFile(path) {
    const abs = resolve(process.cwd(), String(path));
    if (!allowed.has(real(abs)) && !inside(abs)) throw new Error("agent.readFile: " + path + " is not one of this run's files");
    return readFileSync(abs, "utf8");
  },
});
const write = (result) => writeFileSync(join(runDir, "result.json"), JSON.stringify(result));
try {
  const file = join(request.dir, "perform.js");
  let mod;
  try { mod = await import(pathToFileURL(file).href); }
  catch (e) { if (!(e instanceof SyntaxError)) throw e; mod = createRequire(file)(file); }
  const Perform = mod.Perform ?? mod.default?.Perform ?? (typeof mod.default === "function" ? mod.default : undefined);
  if (typeof Perform !== "function") throw new Error("perform.js exports no Perform class");
  const result = await new Perform(agent).run(request.args);
  write(result ?? null);
  process.exitCode = 0;
} catch (e) {
  write({ status: "error", result: "", error: e instanceof Error ? e.message : String(e) });
  process.exitCode = 1;
}
`;
