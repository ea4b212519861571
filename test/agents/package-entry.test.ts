import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";

function exportsOf(specifier: string): string[] {
  if (!existsSync("dist/adapters/agents/index.js")) throw new Error("run `npm run build` first (npm test does)");
  const r = spawnSync(process.execPath, ["--input-type=module", "-e", `const m = await import(${JSON.stringify(specifier)}); console.log(JSON.stringify(Object.keys(m).sort()))`], { encoding: "utf8" });
  expect(r.stderr).toBe("");
  return JSON.parse(r.stdout) as string[];
}

describe("entry points of the drivers and the kit", () => {
  it("pulse/agents has what docs/agents.md imports", () => {
    expect(exportsOf("pulse/agents")).toEqual(expect.arrayContaining(["CliDriver", "BUILTIN_PRESETS", "HttpDriver", "ScriptedDriver", "recordingDriver", "replayDriver", "createDriver", "loadAgentsConfig", "probePreset", "addUsage"]));
  });
  it("pulse/coding has the kit", () => {
    expect(exportsOf("pulse/coding")).toEqual(expect.arrayContaining(["resolveSignal", "startEvidence", "collectEvidence", "createWorktree", "removeWorktree", "checkpoint", "recoveryCommit", "LoopGuard", "resolveLimits", "Notifier", "webhookChannel", "CostLedger", "phaseAuditSink", "substrateAuditSink"]));
  });
});
