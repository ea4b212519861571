/**
 * The driver protocol end to end: our runtime as a subprocess (dist/.../stdio.js) and as an HTTP
 * service, adapters that break the protocol in each way the harness must survive, and the
 * --validate-protocol checker against both a real session and a wrong answer. Needs `npm run
 * build` first (the subprocess adapters run from dist/).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { createSubstrateServer, type SubstrateCall } from "../../adapters/http/server.js";
import { inMemorySubstrates } from "../../adapters/memory/index.js";
import { serveAdapter } from "../../conformance/adapters/pulse/http.js";
import { DriverFailure, RuntimeError, type Driver, type MessageCheck } from "../../conformance/driver/driver.js";
import { HttpDriver } from "../../conformance/driver/http-driver.js";
import { InProcessDriver } from "../../conformance/driver/in-process-driver.js";
import { protocolChecker, schemaDirectory } from "../../conformance/driver/protocol-check.js";
import { METHODS, PROTOCOL_VERSION, type Method, type Methods } from "../../conformance/driver/protocol.js";
import { StdioDriver } from "../../conformance/driver/stdio-driver.js";
import { exampleBlock, readDoc } from "../format/markdown-blocks.js";
import { adapterProcess, isRunning, runningInGroup } from "./processes.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const STDIO_ADAPTER = join(ROOT, "dist/conformance/adapters/pulse/stdio.js");
const HTTP_ADAPTER = join(ROOT, "dist/conformance/adapters/pulse/http.js");
const MISBEHAVING = fileURLToPath(new URL("./fixtures/misbehaving-adapter.mjs", import.meta.url));
const ours = `node ${JSON.stringify(STDIO_ADAPTER)}`;

// The example runs every 2 s on its own; a manual cadence keeps the harness's iterations the
// only ones, so every substrate call below belongs to a trace the test chose.
const HELLO: Record<string, unknown> = { ...(parse(readFileSync(join(ROOT, "manifests/examples/hello.loop.yaml"), "utf8")) as Record<string, unknown>), cadence: { type: "manual" } };
const LOOP = "examples.hello";
const TRACE_A = "4bf92f3577b34da6a3ce929d0e0e4736";
const TRACE_B = "0af7651916cd43dd8448eb211c80319c";

const open: { close(): Promise<void> }[] = [];
function track<T extends { close(): Promise<void> }>(thing: T): T {
  open.push(thing);
  return thing;
}
afterEach(async () => {
  await Promise.all(open.splice(0).map((t) => t.close().catch(() => undefined)));
});

beforeAll(() => {
  if (!existsSync(STDIO_ADAPTER) || !existsSync(HTTP_ADAPTER)) throw new Error("run `npm run build` first: the subprocess adapters run from dist/");
});

/** hello, configure, manifest.load: the start of every test. */
async function start(driver: Driver, configure: Methods["configure"][0] = { substrate_url: null, clock: "virtual" }, scripts?: Methods["manifest.load"][0]["scripts"]) {
  const hello = await driver.call("hello", { protocol_version: PROTOCOL_VERSION });
  await driver.call("configure", configure);
  const { loop_id } = await driver.call("manifest.load", { manifest: HELLO, ...(scripts ? { scripts } : {}) });
  return { hello, loop_id };
}

/** Evaluates to the failure a promise rejects with, or fails the test if it resolves. */
async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (e) {
    return e as Error;
  }
  throw new Error("expected a rejection");
}

describe("StdioDriver against our runtime as a subprocess", () => {
  it("runs hello → configure → manifest.load → iteration.run → clock.advance", async () => {
    const driver = track(new StdioDriver(ours));
    const { hello, loop_id } = await start(driver);
    expect(hello.protocol_version).toBe(PROTOCOL_VERSION);
    expect(hello.runtime).toMatchObject({ name: "pulse", language: "typescript" });
    expect(hello.capabilities).toMatchObject({ clock: "virtual", substrates: ["rebind", "fault-injection"] });
    expect(loop_id).toBe(LOOP);

    const run = await driver.call("iteration.run", { loop_id, workspace: "acme", trace_id: TRACE_A, input: { query: "build" } });
    expect(run).toMatchObject({ trace_id: TRACE_A, status: "completed", closed: true });
    expect(run.phases.map((p) => [p.phase_id, p.status])).toEqual([
      ["fetch", "completed"],
      ["decide", "completed"],
      ["apply", "completed"],
      ["learn", "completed"],
    ]);

    const first = await driver.call("clock.advance", { ms: 1000 });
    const second = await driver.call("clock.advance", { ms: 500 });
    expect(second.now - first.now).toBe(500);

    // Without a recording substrate, the runtime's own substrates saw the calls: every one in
    // the iteration's trace and workspace, the audit events among them.
    const { calls, next } = await driver.call("calls.read", {});
    expect(next).toBe(calls.length);
    expect(calls.length).toBeGreaterThan(0);
    for (const call of calls) expect(call.context).toMatchObject({ trace_id: TRACE_A, workspace_id: "acme" });
    expect(calls.filter((c) => c.slot === "audit" && c.operation === "append_event").length).toBeGreaterThanOrEqual(4);
    expect(await driver.call("calls.read", { since: next })).toEqual({ calls: [], next });
  });

  it("resolves concurrent calls that are answered out of order with their own answers", async () => {
    const driver = track(new StdioDriver(ours));
    // Two loops whose decide phase sleeps on the virtual clock, 1000 ms and 100 ms: their
    // iterations are answered only as time passes, the quick one first, and status.get (sent
    // last) before either.
    await start(driver, undefined, { decide: { delay_ms: 1000, output: { loop: "slow" } } });
    const quick = await driver.call("manifest.load", { manifest: { ...HELLO, loop_id: "examples.quick" }, scripts: { decide: { delay_ms: 100, output: { loop: "quick" } } } });
    const order: string[] = [];
    const note = <T>(name: string, promise: Promise<T>): Promise<T> => promise.then((value) => (order.push(name), value));
    const slowRun = note("slow", driver.call("iteration.run", { loop_id: LOOP, workspace: "acme", trace_id: TRACE_A }));
    const quickRun = note("quick", driver.call("iteration.run", { loop_id: quick.loop_id, workspace: "acme", trace_id: TRACE_B }));
    const status = await note("status", driver.call("status.get", { loop_id: quick.loop_id }));
    expect(status.circuits).toBeTypeOf("object");
    let settled = false;
    void Promise.all([slowRun, quickRun]).finally(() => (settled = true));
    for (let i = 0; i < 50 && !settled; i++) await driver.call("clock.advance", { ms: 100 });
    const [slow, fast] = await Promise.all([slowRun, quickRun]);
    expect(order).toEqual(["status", "quick", "slow"]);
    expect(slow).toMatchObject({ trace_id: TRACE_A, status: "completed" });
    expect(fast).toMatchObject({ trace_id: TRACE_B, status: "completed" });
  });

  it("reports an invalid manifest as RuntimeError MANIFEST_INVALID with violation pointers", async () => {
    const driver = track(new StdioDriver(ours));
    await driver.call("hello", { protocol_version: PROTOCOL_VERSION });
    await driver.call("configure", { substrate_url: null, clock: "virtual" });
    const phases = (HELLO.phases as Record<string, unknown>[]).map((p, i) => (i === 1 ? { ...p, kind: "decide" } : p));
    const error = await rejection(driver.call("manifest.load", { manifest: { ...HELLO, phases } }));
    expect(error).toBeInstanceOf(RuntimeError);
    const runtimeError = error as RuntimeError;
    expect(runtimeError.code).toBe("MANIFEST_INVALID");
    const violations = (runtimeError.data as { violations: { pointer: string; message: string }[] }).violations;
    expect(violations.map((v) => v.pointer)).toContain("/phases/1/kind");
    // The session goes on: a runtime error is an answer, not a broken adapter.
    expect((await driver.call("manifest.load", { manifest: HELLO })).loop_id).toBe(LOOP);
  });

  it("reports a method the adapter does not implement as RuntimeError UNSUPPORTED", async () => {
    const driver = track(new StdioDriver(ours));
    const error = await rejection(driver.call("no.such.method" as Method, {} as never));
    expect(error).toBeInstanceOf(RuntimeError);
    expect((error as RuntimeError).code).toBe("UNSUPPORTED");
  });
});

describe("adapters that break the protocol", () => {
  const misbehaving = (mode: string, check?: MessageCheck): StdioDriver => track(new StdioDriver(`node ${JSON.stringify(MISBEHAVING)} ${mode}`, check));

  /** Runs hello then configure (with a short timeout) and returns the DriverFailure and how long it took. */
  async function failureOf(driver: Driver): Promise<{ failure: Error; ms: number }> {
    const began = Date.now();
    const failure = await rejection(
      (async () => {
        await driver.call("hello", { protocol_version: PROTOCOL_VERSION }, { timeoutMs: 1500 });
        await driver.call("configure", { substrate_url: null, clock: "real" }, { timeoutMs: 1500 });
      })(),
    );
    return { failure, ms: Date.now() - began };
  }

  it.each([
    ["crash", /exited \(code 1\)/, "simulated crash after hello"],
    ["hang", /did not answer configure within 1500 ms/, "not answering configure"],
    ["garbage", /not JSON on stdout: "Runtime ready!.*log to stderr/, "got hello"],
    ["wrong-id", /answered id 1001, which no pending request has/, "got hello"],
  ])("%s is a DriverFailure with a clear message and the adapter's stderr", async (mode, message, stderr) => {
    const driver = misbehaving(mode);
    const { failure, ms } = await failureOf(driver);
    expect(failure).toBeInstanceOf(DriverFailure);
    expect(failure.message).toMatch(message);
    expect(ms).toBeLessThan(4000);
    expect(driver.stderrTail().join("\n")).toContain(`misbehaving-adapter (${mode}): ${stderr}`);
    // Once broken, the session stays broken: no later call reaches the adapter.
    expect(await rejection(driver.call("status.get", { loop_id: LOOP }))).toBeInstanceOf(DriverFailure);
  });

  it("close() ends a hung adapter's whole process group, not only the shell that started it", async () => {
    const driver = new StdioDriver(`node ${JSON.stringify(MISBEHAVING)} hang`);
    expect((await failureOf(driver)).failure.message).toMatch(/did not answer configure/);
    const adapter = adapterProcess(driver.stderrTail().join("\n"));
    expect(adapter?.pgid).toBe(driver.processGroup);
    // Alive until closed: the hang fixture ignores its stdin closing.
    expect(isRunning(adapter!.pid)).toBe(true);
    const began = Date.now();
    await driver.close();
    expect(Date.now() - began).toBeLessThan(4000);
    for (let i = 0; i < 40 && runningInGroup(adapter!.pgid).length > 0; i++) await new Promise((r) => setTimeout(r, 50));
    expect(isRunning(adapter!.pid)).toBe(false);
    expect(runningInGroup(adapter!.pgid)).toEqual([]);
  }, 10_000);

  it("flood (a line that never ends) is a DriverFailure naming the bound, not a RangeError", async () => {
    const driver = misbehaving("flood");
    const began = Date.now();
    await driver.call("hello", { protocol_version: PROTOCOL_VERSION });
    const failure = await rejection(driver.call("configure", { substrate_url: null, clock: "real" }, { timeoutMs: 30_000 }));
    expect(failure).toBeInstanceOf(DriverFailure);
    expect(failure.message).toBe("the adapter wrote more than 16 MiB on stdout without ending the line (a message is one line of at most 16 MiB; log to stderr)");
    // Failed on the bound, long before the call's own timeout.
    expect(Date.now() - began).toBeLessThan(15_000);
  }, 40_000);

  it("big-line (one valid 3 MiB message) is accepted: the bound is on length, not on size as such", async () => {
    const driver = misbehaving("big-line");
    const hello = await driver.call("hello", { protocol_version: PROTOCOL_VERSION });
    expect(hello.runtime.name).toBe("misbehaving");
    await driver.call("configure", { substrate_url: null, clock: "real" });
  });

  it("stderr-flood: 40 MiB on stderr without a newline is cut in the tail, never a failure", async () => {
    const driver = misbehaving("stderr-flood");
    await driver.call("hello", { protocol_version: PROTOCOL_VERSION });
    await driver.call("configure", { substrate_url: null, clock: "real" });
    // stderr is a pipe of its own: it may still be draining when the answers arrive.
    for (let i = 0; i < 100 && !driver.stderrTail().includes("stderr-flood: done"); i++) await new Promise((r) => setTimeout(r, 50));
    const tail = driver.stderrTail();
    expect(tail.some((l) => /^z{4096}… \(line cut: 41943040 bytes, the first 4096 kept\)$/.test(l))).toBe(true);
    expect(tail).toContain("stderr-flood: done");
    expect(Math.max(...tail.map((l) => l.length))).toBeLessThan(5000);
  });

  it.each(["setsid", "daemon"])("close() ends a grandchild that left the group (%s), found by its session mark", async (mode) => {
    const driver = misbehaving(mode);
    await driver.call("hello", { protocol_version: PROTOCOL_VERSION });
    const pid = Number(/grandchild \(pid (\d+)\)/.exec(driver.stderrTail().join("\n"))?.[1]);
    expect(pid).toBeGreaterThan(0);
    const adapter = adapterProcess(driver.stderrTail().join("\n"))!;
    expect(isRunning(pid)).toBe(true);
    expect(runningInGroup(adapter.pgid)).not.toContain(pid); // out of the group: killing the group alone misses it
    await driver.close();
    for (let i = 0; i < 40 && isRunning(pid); i++) await new Promise((r) => setTimeout(r, 50));
    expect(isRunning(pid)).toBe(false);
  });

  it("stderr-noise works: stderr is free logging, drained and kept as a tail", async () => {
    const driver = misbehaving("stderr-noise");
    const hello = await driver.call("hello", { protocol_version: PROTOCOL_VERSION });
    expect(hello.runtime.name).toBe("misbehaving");
    await driver.call("configure", { substrate_url: null, clock: "real" });
    await driver.call("configure", { substrate_url: null, clock: "real" });
    const tail = driver.stderrTail();
    expect(tail.length).toBeLessThanOrEqual(40);
    expect(tail.join("\n")).toContain('{"looks":"like json"}');
    await driver.close();
  });

  it("bad-shape is recorded by the protocol checker, and stops the run under strict checking", async () => {
    const lenient = protocolChecker();
    const hello = await misbehaving("bad-shape", lenient.check).call("hello", { protocol_version: PROTOCOL_VERSION });
    expect(hello.protocol_version).toBe(1);
    expect(lenient.problems).toEqual([
      'response to hello: /result/protocol_version must be string; found 1',
      'response to hello: /result/runtime must have the member "version"',
      'response to hello: /result/capabilities/clock must be one of virtual, real; found "sundial"',
    ]);

    const strict = protocolChecker({ strict: true });
    const driver = misbehaving("bad-shape", strict.check);
    const failure = await rejection(driver.call("hello", { protocol_version: PROTOCOL_VERSION }, { timeoutMs: 2000 }));
    expect(failure).toBeInstanceOf(DriverFailure);
    expect(failure.message).toMatch(/^the adapter broke the driver protocol \(--validate-protocol\): response to hello: \/result\/protocol_version must be string/);
    expect(await rejection(driver.call("configure", { substrate_url: null, clock: "real" }))).toBe(failure);
  });
});

describe("HttpDriver against our runtime as an HTTP service", () => {
  it("serves the same protocol in process (serveAdapter), binding substrates to a recording substrate", async () => {
    const seen: SubstrateCall[] = [];
    const substrate = createSubstrateServer(inMemorySubstrates(), { onCall: (call) => seen.push(call) });
    const { url: substrateUrl } = await substrate.listen(0);
    track(substrate);
    const service = track(await serveAdapter(0));
    expect(service.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const checker = protocolChecker({ strict: true });
    const driver = new HttpDriver(service.url, checker.check);
    const { loop_id } = await start(driver, { substrate_url: substrateUrl, clock: "virtual" });
    const run = await driver.call("iteration.run", { loop_id, workspace: "tenant_a", trace_id: TRACE_B });
    expect(run.status).toBe("completed");
    // The recording substrate, not the runtime, is the witness: every call in the trace and
    // workspace the harness chose, the audit events among them.
    expect(seen.length).toBeGreaterThan(0);
    for (const call of seen) expect(call.context).toMatchObject({ trace_id: TRACE_B, workspace_id: "tenant_a" });
    expect(seen.filter((c) => c.slot === "audit" && c.operation === "append_event").map((c) => (c.args as { event: { event_type: string } }).event.event_type)).toContain("phase.completed");
    // fault injection is for the runtime's own substrates only.
    const unsupported = await rejection(driver.call("fault.inject", { slot: "memory", mode: "unavailable" }));
    expect((unsupported as RuntimeError).code).toBe("UNSUPPORTED");
    expect(checker.problems).toEqual([]);
  });

  it("answers a body that is not JSON with a JSON-RPC parse error, and GET with 405", async () => {
    const service = track(await serveAdapter(0));
    const bad = await fetch(service.url, { method: "POST", headers: { "content-type": "application/json" }, body: "{nope" });
    expect(bad.status).toBe(200);
    expect(await bad.json()).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32700 } });
    const get = await fetch(service.url);
    expect(get.status).toBe(405);
    expect(get.headers.get("allow")).toBe("POST");
  });

  it("runs as `node dist/conformance/adapters/pulse/http.js --port 0` and prints where it listens", async () => {
    const child: ChildProcess = spawn(process.execPath, [HTTP_ADAPTER, "--port", "0"], { stdio: ["ignore", "pipe", "pipe"] });
    track({ close: async () => void child.kill("SIGTERM") });
    const line = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout! }).once("line", resolve);
      child.once("exit", (code) => reject(new Error(`http.js exited with ${code}`)));
    });
    const url = /^listening (http:\/\/\S+)$/.exec(line)?.[1];
    expect(url).toBeDefined();
    const driver = new HttpDriver(url!);
    expect(driver.describe).toBe(`--attach ${url}`);
    const { loop_id } = await start(driver);
    expect((await driver.call("iteration.run", { loop_id, workspace: "acme" })).status).toBe("completed");
    // shutdown ends the session, not the service: the next session starts with configure.
    await driver.call("shutdown", {});
    expect((await driver.call("hello", { protocol_version: PROTOCOL_VERSION })).runtime.name).toBe("pulse");
  });

  it("is a DriverFailure when nothing listens at the URL", async () => {
    const service = await serveAdapter(0);
    await service.close();
    const failure = await rejection(new HttpDriver(service.url).call("hello", { protocol_version: PROTOCOL_VERSION }));
    expect(failure).toBeInstanceOf(DriverFailure);
    expect(failure.message).toContain(`could not reach the adapter at ${service.url}`);
  });
});

describe("protocol checker (--validate-protocol)", () => {
  it("passes every message of a real session over stdio, all eleven methods", async () => {
    const checker = protocolChecker({ strict: true });
    const methods = new Set<string>();
    const check: MessageCheck = (direction, method, message) => {
      methods.add(method);
      checker.check(direction, method, message);
    };
    const driver = track(new StdioDriver(ours, check));
    const { loop_id } = await start(driver, { substrate_url: null, clock: "virtual", circuit: { failure_threshold: 2, cooldown_ms: 1000 } }, {
      fetch: { calls: [{ slot: "memory", operation: "retrieve_context", args: { query: "$input.query", k: 3 } }], output: { n: "$invocation" } },
      apply: { outputs: [{ causal_parent_ids: [] }], fail_times: 1 },
    });
    await driver.call("iteration.run", { loop_id, workspace: "acme", input: { query: "x" } });
    await driver.call("iteration.run", { loop_id, workspace: "acme", trace_id: TRACE_A, input: { query: "y" } });
    await driver.call("phase.invoke", { loop_id, workspace: "acme", trace_id: TRACE_B, phase_id: "fetch", input: { query: "z" } });
    const refused = await driver.call("phase.invoke", { loop_id, workspace: "other", trace_id: TRACE_B, phase_id: "learn" });
    expect(refused).toMatchObject({ status: "failed", error: { code: "PHASE_ORDER_VIOLATION" } });
    await driver.call("fault.inject", { slot: "memory", mode: "unavailable" });
    // fetch retries with backoff on the virtual clock: the iteration ends only as time passes.
    let settled = false;
    const degraded = driver.call("iteration.run", { loop_id, workspace: "acme", input: { query: "down" } }).finally(() => (settled = true));
    for (let i = 0; i < 100 && !settled; i++) await driver.call("clock.advance", { ms: 500 });
    expect((await degraded).status).not.toBe("completed");
    expect((await driver.call("status.get", { loop_id })).circuits.memory).toBe("open");
    await driver.call("fault.heal", { slot: "memory" });
    await driver.call("calls.read", { since: 0 });
    await rejection(driver.call("manifest.load", { manifest: { loop_id: "Not Valid" } }));
    await rejection(driver.call("status.get", { loop_id: "no.such_loop" }));
    await driver.close();
    expect(checker.problems).toEqual([]);
    expect([...methods].sort()).toEqual([...METHODS].sort());
  });

  it("passes the in-process driver's messages too", async () => {
    const checker = protocolChecker({ strict: true });
    const driver = track(new InProcessDriver(checker.check));
    const { loop_id } = await start(driver);
    await driver.call("iteration.run", { loop_id, workspace: "acme" });
    expect(checker.problems).toEqual([]);
  });

  it("names the message, the pointer and the rule of each problem, once", () => {
    const { check, problems } = protocolChecker();
    const response = (result: unknown) => ({ jsonrpc: "2.0", id: 1, result });
    check("response", "configure", response({ ok: true }));
    check("response", "configure", response({ ok: true }));
    check("response", "iteration.run", response({ trace_id: "abc", status: "failed", closed: false, phases: [{ phase_id: "fetch", status: "failed" }] }));
    check("response", "manifest.load", { jsonrpc: "2.0", id: 2, error: { code: -32000, message: "bad", data: { code: "MANIFEST_INVALID" } } });
    check("response", "status.get", { jsonrpc: "2.0", id: 3, error: { code: -32000, message: "no data" } });
    check("request", "tenant.create", { jsonrpc: "2.0", id: 4, method: "tenant.create", params: {} });
    check("request", "clock.advance", { jsonrpc: "2.0", id: 5, method: "clock.advance", params: { ms: -1 } });
    expect(problems).toEqual([
      'response to configure: /result has a member the protocol does not define: "ok"',
      'response to iteration.run: /result/trace_id must match pattern "^(?!0{32}$)[0-9a-f]{32}$"; found "abc"',
      'response to iteration.run: /result/phases/0 must have the member "error"',
      'response to manifest.load: /error/data must have the member "violations"',
      'response to status.get: /error must have the member "data"',
      'request tenant.create: /method "tenant.create" is not a method of the driver protocol',
      "request clock.advance: /params/ms must be >= 0; found -1",
    ]);
  });

  it("finds the schemas from the source tree, dist/ and an esbuild chunk under dist/bin", async () => {
    const expected = join(ROOT, "schema", "conformance", "driver");
    expect(schemaDirectory()).toBe(expected);
    expect(schemaDirectory(join(ROOT, "dist", "bin", "chunks"))).toBe(expected);
    const built = (await import(pathToFileURL(join(ROOT, "dist/conformance/driver/protocol-check.js")).href)) as typeof import("../../conformance/driver/protocol-check.js");
    expect(built.schemaDirectory()).toBe(expected);
  });
});

describe("the schemas agree with protocol.ts", () => {
  /**
   * For every method, the fullest and the barest params and result the TypeScript types allow
   * (typed, so the compiler checks them against protocol.ts): the schemas must accept all of
   * them. With additionalProperties false everywhere, a member protocol.ts has and a schema
   * lacks fails the full example; a member a schema requires and protocol.ts makes optional
   * fails the bare one.
   */
  type Examples<M extends Method> = { params: Methods[M][0][]; result: Methods[M][1][] };
  const wireError = { code: "CIRCUIT_OPEN", message: "memory is open", data: { slot: "memory" } };
  const examples: { [M in Method]: Examples<M> } = {
    hello: {
      params: [{ protocol_version: "1" }],
      result: [
        { protocol_version: "1", runtime: { name: "r", version: "1.0.0", language: "go", digest: "sha256:00" }, capabilities: { clock: "real", substrates: ["rebind", "fault-injection"], mutants: ["no-circuit"] } },
        { protocol_version: "1", runtime: { name: "r", version: "1.0.0", language: "go" }, capabilities: { clock: "virtual", substrates: [] } },
      ],
    },
    configure: {
      params: [
        { substrate_url: "http://127.0.0.1:9000", clock: "virtual", circuit: { failure_threshold: 3, cooldown_ms: 5000 }, mutant: "no-circuit" },
        { substrate_url: null, clock: "real" },
      ],
      result: [{}],
    },
    "manifest.load": {
      params: [
        { manifest: { loop_id: "a.b" }, scripts: { fetch: { output: 1, outputs: [1, 2], calls: [{ slot: "time", operation: "at_timescale", args: { timescale: "fast" }, after_delay: true }], delay_ms: 10, fail_times: 2 }, learn: {} } },
        { manifest: {} },
      ],
      result: [{ loop_id: "a.b" }],
    },
    "iteration.run": {
      params: [{ loop_id: "a.b", workspace: "w", trace_id: TRACE_A, input: { q: 1 } }, { loop_id: "a.b", workspace: "w" }],
      result: [
        { trace_id: TRACE_A, status: "failed", closed: false, phases: [{ phase_id: "p", status: "failed", output: 1, signature: "blake3:00", replayed: false, error: wireError }], error: wireError },
        { trace_id: TRACE_A, status: "completed", closed: true, phases: [{ phase_id: "p", status: "completed" }] },
      ],
    },
    "phase.invoke": {
      params: [{ loop_id: "a.b", workspace: "w", trace_id: TRACE_A, phase_id: "p", input: null }, { loop_id: "a.b", workspace: "w", trace_id: TRACE_A, phase_id: "p" }],
      result: [{ status: "failed", output: null, signature: "blake3:00", replayed: true, error: wireError }, { status: "completed" }],
    },
    "clock.advance": { params: [{ ms: 0 }, { ms: 1.5 }], result: [{ now: 1767225600000 }] },
    "status.get": { params: [{ loop_id: "a.b" }], result: [{ status: "degraded", circuits: { memory: "open", audit: "half_open", auth: "closed" } }, { status: "idle", circuits: {} }] },
    "fault.inject": { params: [{ slot: "audit", mode: "unavailable" }], result: [{}] },
    "fault.heal": { params: [{ slot: "audit" }], result: [{}] },
    "calls.read": {
      params: [{ since: 3 }, {}],
      result: [
        { calls: [{ slot: "memory", operation: "store_node", args: {}, context: { trace_id: TRACE_A, workspace_id: "w", tx_id: "tx_1" }, at: 1, error: "unavailable" }], next: 1 },
        { calls: [{ slot: "memory", operation: "store_node", args: null, context: {}, at: 1 }], next: 1 },
      ],
    },
    shutdown: { params: [{}], result: [{}] },
  };

  it("has one schema file per method of METHODS, and the envelope", () => {
    expect(readdirSync(schemaDirectory()).sort()).toEqual([...METHODS.map((m) => `${m}.json`), "envelope.json"].sort());
    expect(Object.keys(examples).sort()).toEqual([...METHODS].sort());
  });

  it.each([...METHODS])("%s: every shape protocol.ts allows is valid", (method) => {
    const { check, problems } = protocolChecker();
    const { params, result } = examples[method] as Examples<Method>;
    for (const p of params) check("request", method, { jsonrpc: "2.0", id: 1, method, params: p });
    for (const r of result) check("response", method, { jsonrpc: "2.0", id: 1, result: r });
    expect(problems).toEqual([]);
  });
});

describe("docs/conformance/driver-protocol.md", () => {
  const doc = readDoc("conformance/driver-protocol.md");
  const envelope = (name: string): unknown => JSON.parse(exampleBlock(doc, name));

  it.each([
    ["hello.result", "hello"],
    ["iteration.run.result", "iteration.run"],
    ["phase.invoke.result", "phase.invoke"],
    ["status.get.result", "status.get"],
    ["calls.read.result", "calls.read"],
  ] as const)("the %s example matches its schema", (name, method) => {
    const { check, problems } = protocolChecker();
    check("response", method, { jsonrpc: "2.0", id: 1, result: envelope(name) });
    expect(problems).toEqual([]);
  });

  it("the configure params, PhaseScript and error response examples match their schemas", () => {
    const { check, problems } = protocolChecker();
    check("request", "configure", { jsonrpc: "2.0", id: 1, method: "configure", params: envelope("configure.params") });
    check("request", "manifest.load", { jsonrpc: "2.0", id: 2, method: "manifest.load", params: { manifest: HELLO, scripts: { apply: envelope("phasescript") } } });
    check("response", "manifest.load", envelope("response.manifest-invalid"));
    check("response", "status.get", envelope("response.runtime-error"));
    expect(problems).toEqual([]);
  });

  it("lists every schema file and every method", () => {
    for (const file of readdirSync(schemaDirectory())) expect(doc).toContain(`(../../schema/conformance/driver/${file})`);
    for (const method of METHODS) expect(doc).toMatch(new RegExp(`^### .*\`${method.replace(".", "\\.")}\``, "m"));
  });
});
