/** `pulse run --transport nats://…`: two processes of one system signal each other through JetStream. */
import { spawn } from "node:child_process";
import { resolve } from "node:path";
import { createInterface } from "node:readline";
import { afterEach, expect, it } from "vitest";
import { isolatedStore, ROOT, runBin } from "../../cli/run-bin.js";
import { describeWith, natsService } from "../../helpers/services.js";
import { until } from "../../transports/contract.js";
import { natsSystem, type NatsSystem } from "./helpers.js";

const PULSE = resolve(ROOT, "dist/bin/pulse.mjs");

describeWith(await natsService(), "pulse run --transport nats://", (url) => {
  let sys: NatsSystem | undefined;
  afterEach(async () => {
    await sys?.close();
    sys = undefined;
  });

  it("a loop in one pulse run signals a loop in another: the receiver runs an iteration caused by the signal", async () => {
    sys = natsSystem(url);
    const receiver = spawn(process.execPath, [PULSE, "run", "manifests/prism.benchmark.yaml", "--transport", sys.url, "--no-kickoff", "--json", "--duration", "60s"], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...isolatedStore() } });
    const records: Record<string, any>[] = [];
    let stderr = "";
    receiver.stderr.on("data", (d) => (stderr += d));
    createInterface({ input: receiver.stdout }).on("line", (l) => records.push(JSON.parse(l)));
    const exited = new Promise<number | null>((r) => receiver.on("exit", (code) => r(code)));
    try {
      await until("the receiver to take signals", () => records.some((r) => r.type === "note" && /signals through NATS .* taking those for prism\.benchmark/.test(r.message)), 20_000);
      const sender = runBin("pulse", ["run", "manifests/graphonomous.continual_learning.yaml", "--transport", sys.url, "--once"]);
      expect(sender.stderr).toBe("");
      expect(sender.code).toBe(0);
      expect(sender.stdout).toMatch(/signal outcome_to_prism to prism\.benchmark: accepted/);
      const signalled = () => records.filter((r) => r.type === "iteration.started" && r.cause?.signal);
      await until("the signal's iteration to finish", () => signalled().some((s) => records.some((r) => r.type === "iteration.finished" && r.trace_id === s.trace_id && r.status === "completed")));
      const started = signalled();
      expect(started).toEqual([expect.objectContaining({ loop_id: "prism.benchmark", cause: expect.objectContaining({ source: "loop:graphonomous.continual_learning/phase:learn_outcome" }) })]);
    } finally {
      receiver.kill("SIGINT");
    }
    expect(await exited).toBe(0);
    expect(stderr).toBe("");
  });
});

it("pulse run --transport: an address that is not NATS, a server that does not answer, or --route beside it: one line, exit 2", () => {
  const bad = runBin("pulse", ["run", "manifests/prism.benchmark.yaml", "--transport", "http://127.0.0.1:4222", "--once"]);
  expect(bad.code).toBe(2);
  expect(bad.stderr).toMatch(/^pulse: --transport: "http:\/\/127\.0\.0\.1:4222" is not a NATS address .*\n$/);
  const down = runBin("pulse", ["run", "manifests/prism.benchmark.yaml", "--transport", "nats://127.0.0.1:1", "--once"]);
  expect(down.code).toBe(2);
  expect(down.stderr).toMatch(/^pulse: --transport: cannot connect to NATS at nats:\/\/127\.0\.0\.1:1: .*\n$/);
  const both = runBin("pulse", ["run", "manifests/prism.benchmark.yaml", "--transport", "nats://127.0.0.1:1", "--route", "a.b=http://127.0.0.1:1", "--once"]);
  expect(both.code).toBe(2);
  expect(both.stderr).toMatch(/cannot be combined with --route/);
});
