/**
 * `pulse run --transport` when its NATS server goes away and comes back: one note when the
 * connection goes (with its time), one when it is back (with how long it lasted), in the trace
 * and in --json, rather than silence until a signal's PubAck times out. The test runs a NATS
 * server of its own (nats-server -js on a free port, a temporary store directory), SIGKILLs it
 * and starts it again on the same port.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { afterEach, describe, expect, it } from "vitest";
import { isolatedStore, ROOT } from "../../cli/run-bin.js";
import { until } from "../../transports/contract.js";

const PULSE = resolve(ROOT, "dist/bin/pulse.mjs");
const hasServer = spawnSync("nats-server", ["--version"]).status === 0;

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

describe.skipIf(!hasServer)("pulse run when its NATS server goes away", () => {
  const cleanup: (() => void)[] = [];
  afterEach(() => {
    for (const c of cleanup.splice(0).reverse()) c();
  });

  it("prints one disconnected and one reconnected note, each with its time, in --json and in the trace", async () => {
    const port = await freePort();
    const dir = mkdtempSync(join(tmpdir(), "pulse-nats-"));
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
    let server: ChildProcess | undefined;
    const startServer = async () => {
      server = spawn("nats-server", ["-js", "-sd", dir, "-a", "127.0.0.1", "-p", String(port)], { stdio: "ignore" });
      const s = server;
      cleanup.push(() => s.kill("SIGKILL"));
      await new Promise((r) => setTimeout(r, 400));
    };
    await startServer();
    const run = (json: boolean) => {
      const child = spawn(process.execPath, [PULSE, "run", "manifests/prism.benchmark.yaml", "--transport", `nats://127.0.0.1:${port}`, "--no-kickoff", "--duration", "60s", "--no-color", ...(json ? ["--json"] : [])], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...isolatedStore() } });
      cleanup.push(() => child.kill("SIGKILL"));
      const lines: string[] = [];
      createInterface({ input: child.stdout! }).on("line", (l) => lines.push(l));
      const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
      return { child, lines, exited };
    };
    const json = run(true);
    const text = run(false);
    await until("both runs to take signals", () => json.lines.some((l) => l.includes("taking those for prism.benchmark")) && text.lines.some((l) => l.includes("taking those for prism.benchmark")), 20_000);
    const before = Date.now();
    server!.kill("SIGKILL");
    const records = () => json.lines.map((l) => JSON.parse(l) as { type: string; message?: string; at?: number }).filter((r) => r.type === "note" && /^NATS: /.test(r.message ?? ""));
    await until("the disconnection to be told", () => records().length === 1 && text.lines.some((l) => l.includes("NATS: disconnected")), 10_000);
    await new Promise((r) => setTimeout(r, 1200));
    await startServer();
    await until("the reconnection to be told", () => records().length === 2 && text.lines.some((l) => l.includes("NATS: reconnected")), 15_000);
    await new Promise((r) => setTimeout(r, 1000));
    const [down, up] = records();
    expect(down).toEqual({ type: "note", message: `NATS: disconnected from 127.0.0.1:${port}; reconnecting every 500 ms (signals are retried until it is back)`, at: expect.any(Number) });
    expect(down!.at).toBeGreaterThanOrEqual(before);
    expect(up!.message).toMatch(new RegExp(`^NATS: reconnected to 127\\.0\\.0\\.1:${port} after \\d+\\.\\d s$`));
    expect(up!.at).toBeGreaterThan(down!.at!);
    // Once each: no line per reconnection attempt.
    expect(records()).toHaveLength(2);
    expect(text.lines.filter((l) => /^\d\d:\d\d:\d\d\.\d{3}  note: NATS: (disconnected|reconnected) /.test(l))).toHaveLength(2);
    for (const r of [json, text]) r.child.kill("SIGINT");
    expect(await json.exited).toBe(0);
    expect(await text.exited).toBe(0);
  });
});
