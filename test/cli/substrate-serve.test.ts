/**
 * `pulse substrate serve`, as a user starts it: a real process serving the in-memory substrates
 * over HTTP, reached with the project's own HTTP client; loopback by default, a token required
 * (and checked) otherwise.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { request } from "node:http";
import { resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { httpSubstrates } from "../../adapters/index.js";
import { ROOT, runBin } from "./run-bin.js";

const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) c.kill("SIGKILL");
});

/** Starts the server and resolves with its URL once it printed it. */
function serve(args: string[], env: Record<string, string> = {}): Promise<{ url: string; child: ChildProcess; output: () => string }> {
  const child = spawn(process.execPath, [resolve(ROOT, "dist/bin/pulse.mjs"), "substrate", "serve", "--port", "0", ...args], { cwd: ROOT, env: { PATH: process.env.PATH ?? "", ...env }, stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  let out = "";
  return new Promise((done, fail) => {
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      const url = /at (http:\/\/\S+)/.exec(out)?.[1];
      if (url) done({ url, child, output: () => out });
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    child.on("exit", (code) => fail(new Error(`exited ${code}: ${out}`)));
  });
}

const ctx = { trace_id: "4bf92f3577b34da6a3ce929d0e0e4736", workspace_id: "acme" };

describe("pulse substrate serve", () => {
  it("serves every slot on loopback without a token, to the HTTP client, and stops on SIGTERM with exit 0", async () => {
    const { url, child, output } = await serve([]);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(output()).toContain("serving in-memory substrates memory, policy, audit, auth, time at");
    const substrates = httpSubstrates(url);
    await substrates.memory.store_node({ node: { id: "n1", content: "hello pulse", confidence: 0.5 } as never }, ctx);
    const found = (await substrates.memory.retrieve_context({ query: "hello", k: 5 }, ctx)) as { nodes: { id: string }[] };
    expect(found.nodes.map((n) => n.id)).toContain("n1");
    expect(await substrates.auth.permission_check({ agent_id: "a", operation: "x" } as never, ctx)).toBeDefined();
    const exited = new Promise((done) => child.on("exit", done));
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
  });

  it("with a token, refuses a call without it (401) and serves one with it; health stays open", async () => {
    const { url } = await serve(["--policy-rule", '{"actor": "agent_7", "action": "write", "decision": "deny", "reason": "agent_7 is read-only"}'], { PULSE_SUBSTRATE_TOKEN: "s3cret" });
    const request = { args: { actor: "agent_7", action: "write", resource: "memory" }, context: ctx };
    const post = (headers: Record<string, string>) => fetch(`${url}/v1/policy/check_policy`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(request) });
    const refused = await post({});
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("UNAUTHORIZED");
    expect((await post({ authorization: "Bearer wrong" })).status).toBe(401);
    const served = await post({ authorization: "Bearer s3cret" });
    expect(await served.json()).toEqual({ result: { decision: "deny", reason: "agent_7 is read-only" } });
    expect((await fetch(`${url}/v1/health`)).status).toBe(200);
    // The project's client sends it as a header.
    const client = httpSubstrates(url, { headers: { authorization: "Bearer s3cret" } });
    expect(await client.policy.check_policy({ actor: "agent_7", action: "write", resource: "memory" }, ctx)).toEqual({ decision: "deny", reason: "agent_7 is read-only" });
  });

  it("refuses a web page: a foreign Origin, a rebinding Host and a non-JSON POST; takes the loopback names and clients with no Origin", async () => {
    const { url } = await serve([]);
    const port = Number(new URL(url).port);
    const body = JSON.stringify({ args: { node: { id: "pwn", content: "x" } }, context: ctx });
    const send = (headers: Record<string, string>) =>
      new Promise<number>((done, fail) => {
        const req = request({ host: "127.0.0.1", port, method: "POST", path: "/v1/memory/store_node", headers: { "content-length": String(Buffer.byteLength(body)), ...headers }, setHost: !("host" in headers) }, (res) => {
          res.resume();
          done(res.statusCode!);
        });
        req.on("error", fail);
        req.end(body);
      });
    const json = { "content-type": "application/json" };
    expect(await send({ ...json, origin: "http://evil.example" })).toBe(403);
    expect(await send({ ...json, host: `evil.example:${port}` })).toBe(403);
    expect(await send({ "content-type": "text/plain" })).toBe(415);
    for (const near of [json, { ...json, host: "localhost" }, { ...json, host: `[::1]:${port}` }, { ...json, origin: `http://127.0.0.1:${port}` }]) expect(await send(near), JSON.stringify(near)).toBe(200);
  });

  it("refuses to listen off loopback without a token (exit 2); with one it listens", async () => {
    const r = runBin("pulse", ["substrate", "serve", "--host", "0.0.0.0", "--port", "0", "--duration", "1"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe("pulse: listening on 0.0.0.0 exposes the substrates to other machines: set a token with --token or PULSE_SUBSTRATE_TOKEN (or keep the default --host 127.0.0.1)\n");
    const { url } = await serve(["--host", "0.0.0.0", "--token", "t"]);
    expect(url).toMatch(/^http:\/\/0\.0\.0\.0:\d+$/);
  });

  it("says what is wrong with a bad flag, in one line", () => {
    expect(runBin("pulse", ["substrate", "serve", "--slots", "memory,mind"])).toMatchObject({ code: 2, stderr: "pulse: --slots takes memory, policy, audit, auth, time, not mind\n" });
    expect(runBin("pulse", ["substrate", "serve", "--policy-rule", "{"]).stderr).toMatch(/^pulse: --policy-rule takes a JSON object/);
    expect(runBin("pulse", ["substrate", "serve", "--policy-rule", '{"decision": "maybe"}']).stderr).toMatch(/^pulse: --policy-rule: policy rule 0: decision must be "allow" or "deny"/);
  });
});

describe("pulse conform", () => {
  it("is pulse-conform, word for word", () => {
    const help = runBin("pulse", ["conform", "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toBe(runBin("pulse-conform", ["--help"]).stdout);
    expect(runBin("pulse", ["--help"]).stdout).toMatch(/\n {2}conform\s+Certify a PULSE runtime/);
    const bogus = runBin("pulse", ["conform", "--bogus"]);
    expect(bogus.code).toBe(runBin("pulse-conform", ["--bogus"]).code);
  });
});
