/**
 * docs/substrates-http.md is a specification others implement from, so it is checked against the
 * code: its examples are replayed against a real server and must match byte for byte in meaning,
 * its schemas must accept every request and answer the reference makes, and its Python server
 * must work with the TypeScript client.
 */
import { spawn, spawnSync } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { httpSubstrates } from "../../adapters/http/client.js";
import { createSubstrateServer } from "../../adapters/http/server.js";
import type { SubstrateCall, SubstrateServer } from "../../adapters/http/server.js";
import { inMemorySubstrates } from "../../adapters/memory/index.js";
import { SUBSTRATE_OPERATIONS } from "../../src/substrates/contracts.js";
import { ctx } from "./helpers.js";
import { outcome, SCRIPT } from "./script.js";
import { itWhen } from "../helpers/requires.js";

const doc = readFileSync(new URL("../../docs/substrates-http.md", import.meta.url), "utf8");

/** The fenced block right after each `<!-- kind: name -->` marker. */
function marked(kind: string): Map<string, string> {
  const out = new Map<string, string>();
  const pattern = new RegExp(`<!-- ${kind}: ([^>]+?) -->\\s*\`\`\`\\w*\\n([\\s\\S]*?)\`\`\``, "g");
  for (const [, name, body] of doc.matchAll(pattern)) out.set(name!, body!);
  return out;
}

const schemas = marked("schema");
const examples = marked("example");

function requestBody(name: string): unknown {
  const text = examples.get(name);
  if (text === undefined) throw new Error(`no example "${name}"`);
  if (text.startsWith("POST ")) return JSON.parse(text.slice(text.indexOf("\n\n") + 2));
  const curl = /-d '([\s\S]*?)'/.exec(text);
  return JSON.parse(curl ? curl[1]! : text);
}

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;
const ajv = addFormats(new Ajv2020({ allErrors: true, strict: false }));
const tokenDir = new URL("../../schema/tokens/", import.meta.url);
for (const file of readdirSync(tokenDir)) ajv.addSchema(JSON.parse(readFileSync(new URL(file, tokenDir), "utf8")));
for (const name of ["request", "response", "operations"]) ajv.addSchema(JSON.parse(schemas.get(name)!));

function check(ref: string, value: unknown): string[] {
  const validate = ajv.getSchema(ref);
  if (!validate) throw new Error(`no schema ${ref}`);
  return validate(value) ? [] : (validate.errors ?? []).map((e) => `${ref} ${e.instancePath} ${e.message}`);
}
const opRef = (slot: string, operation: string, part: "args" | "result") => `urn:pulse:substrates-http:v1:operations#/$defs/${slot}.${operation}.${part}`;

describe("docs/substrates-http.md", () => {
  let server: SubstrateServer;
  let url: string;
  const calls: SubstrateCall[] = [];

  beforeAll(async () => {
    server = createSubstrateServer(inMemorySubstrates({ policyRules: [{ actor: "agent_7", action: "write", decision: "deny", reason: "agent_7 is read-only" }] }), { onCall: (call) => calls.push(call) });
    url = (await server.listen()).url;
  });
  afterAll(() => server.close());

  it("has a schema for the arguments and the result of every operation", () => {
    for (const [slot, operations] of Object.entries(SUBSTRATE_OPERATIONS)) {
      for (const operation of operations) for (const part of ["args", "result"] as const) expect(ajv.getSchema(opRef(slot, operation, part)), `${slot}.${operation}.${part}`).toBeDefined();
    }
  });

  it("its worked examples are what the reference server answers, in order", async () => {
    const steps: Array<[string, string, unknown]> = [
      ["memory", "store_node", requestBody("memory.store_node request")],
      ["memory", "begin_transaction", { args: {}, context: (requestBody("memory.store_node request") as { context: unknown }).context }],
      ["memory", "retrieve_context", requestBody("memory.retrieve_context request")],
      ["memory", "learn_from_outcome", requestBody("memory.learn_from_outcome request")],
      ["audit", "append_event", requestBody("audit.append_event request")],
      ["audit", "query_by_trace", requestBody("audit.query_by_trace request")],
      ["policy", "check_policy", requestBody("policy.check_policy request")],
    ];
    for (const [slot, operation, body] of steps) {
      expect(check("urn:pulse:substrates-http:v1:request", body)).toEqual([]);
      expect(check(opRef(slot, operation, "args"), (body as { args: unknown }).args)).toEqual([]);
      const response = await fetch(`${url}/v1/${slot}/${operation}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
      const answer = await response.json();
      expect(response.status, `${slot}.${operation}`).toBe(200);
      const documented = examples.get(`${slot}.${operation} response`);
      if (documented) expect(answer, `${slot}.${operation}`).toEqual(JSON.parse(documented));
    }
  });

  it("its error example is the real answer to a bad trace id", async () => {
    const response = await fetch(`${url}/v1/memory/retrieve_context`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ args: {}, context: { trace_id: "abc", workspace_id: "acme" } }) });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual(JSON.parse(examples.get("error response")!));
  });

  it("its schemas accept every request and answer of a session over all operations", async () => {
    calls.length = 0;
    const client = httpSubstrates(url);
    for (const call of SCRIPT) await outcome(client, call);
    expect(calls.length).toBeGreaterThan(30);
    const problems: string[] = [];
    for (const call of calls) {
      const answer = call.error ? { error: { code: call.error.code, message: call.error.message } } : { result: call.result };
      problems.push(...check("urn:pulse:substrates-http:v1:response", answer));
      if (call.error) continue;
      problems.push(...check("urn:pulse:substrates-http:v1:request", { args: call.args, context: call.context }));
      problems.push(...check(opRef(call.slot, call.operation, "args"), call.args));
      problems.push(...check(opRef(call.slot, call.operation, "result"), call.result));
    }
    expect(problems).toEqual([]);
  });

  const python = spawnSync("python3", ["--version"]).status === 0;
  itWhen(Boolean(python), "python3")("its Python server works with the TypeScript client", async () => {
    const code = /## A server in a dozen lines of Python[\s\S]*?```python\n([\s\S]*?)```/.exec(doc)![1]!;
    const port = 20000 + Math.floor(Math.random() * 20000);
    const file = join(tmpdir(), `pulse-auth-${process.pid}.py`);
    writeFileSync(file, code.replace("8080", String(port)));
    const child = spawn("python3", [file], { stdio: "ignore" });
    try {
      const client = httpSubstrates(`http://127.0.0.1:${port}`, { timeoutMs: 1000 });
      await expect.poll(() => client.auth.permission_check({ agent_id: "x", operation: "act" }, ctx()).catch(() => "down"), { timeout: 10_000 }).toBe("allow");
      expect(await client.auth.permission_check({ agent_id: "rogue", operation: "act" }, ctx())).toBe("deny");
      expect(await client.auth.agent_lifecycle({ agent_id: "x" }, ctx())).toEqual({ state: "active" });
      await expect(client.memory.consolidate({}, ctx())).rejects.toMatchObject({ name: "SubstrateRequestError", code: "NOT_FOUND" });
    } finally {
      child.kill();
    }
  });
});
