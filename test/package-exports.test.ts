import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";

/** What a program importing the package by name gets (Node resolves `pulse/…` through package.json "exports"). */
function exportsOf(specifier: string): string[] {
  if (!existsSync("dist/src/index.js")) throw new Error("run `npm run build` first (npm test does)");
  const r = spawnSync(process.execPath, ["--input-type=module", "-e", `const m = await import(${JSON.stringify(specifier)}); console.log(JSON.stringify(Object.keys(m).sort()))`], { encoding: "utf8" });
  expect(r.stderr).toBe("");
  return JSON.parse(r.stdout) as string[];
}

describe("the package's entry points", () => {
  it("pulse/host has what docs/hosting.md and docs/connections.md import, HTTP transport included", () => {
    expect(exportsOf("pulse/host")).toEqual(
      expect.arrayContaining(["createHost", "Host", "HttpTransport", "createSignalServer", "InProcessTransport", "TransportError", "ReceiverUnavailableError", "DEFAULT_STOP_TIMEOUT_MS", "recordingHandler"]),
    );
  });

  it("pulse has the runtime and the validator", () => {
    expect(exportsOf("pulse")).toEqual(expect.arrayContaining(["createRuntime", "validateSources", "validateValue", "readSource"]));
  });

  it("pulse/adapters has the substrate adapters docs/runtime.md and docs/substrates-http.md import", () => {
    expect(exportsOf("pulse/adapters")).toEqual(
      expect.arrayContaining(["inMemorySubstrates", "InMemoryAudit", "CountingAudit", "httpSubstrates", "httpSubstrateFactory", "createSubstrateServer", "withFaults", "recordCalls"]),
    );
    expect(exportsOf("pulse")).toContain("SubstrateRegistry");
  });

  it("pulse/adapters/postgres and pulse/adapters/nats have what docs/deploy.md and docs/connections.md name", () => {
    expect(exportsOf("pulse/adapters/postgres")).toEqual(expect.arrayContaining(["PostgresStore", "migrate", "PostgresLeases", "PostgresAudit", "postgresSubstrateFactory"]));
    expect(exportsOf("pulse/adapters/nats")).toEqual(expect.arrayContaining(["NatsTransport", "encodeSignal", "decodeSignal"]));
  });

  it("pulse/agent has the plan → decide → act agent's library API (docs/agent.md)", () => {
    expect(exportsOf("pulse/agent")).toEqual(expect.arrayContaining(["createAgent", "reportSummary", "summarize", "mergeReports", "discoverActions", "bm25", "reciprocalRankFusion", "validateFeedback", "AgentRunner"]));
  });

  it("a path outside the exports map is not importable by name (only the documented entry points are public)", () => {
    const r = spawnSync(process.execPath, ["--input-type=module", "-e", `await import("pulse/dist/src/transports/http.js")`], { encoding: "utf8" });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/ERR_PACKAGE_PATH_NOT_EXPORTED/);
  });
});
