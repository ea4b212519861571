/**
 * Every driver that starts processes tells its caller of each one as it starts (RunOptions.onSpawn),
 * with what a later pulse needs to find it again: pid, group, start time and run marker. The
 * session loop records these; a driver that kept one to itself would leave an agent nobody reaps.
 */
import { describe, expect, it } from "vitest";
import { ScriptedDriver } from "../../adapters/agents/scripted/scripted-driver.js";
import { ToolRunner } from "../../adapters/agents/http/tools.js";
import type { SpawnInfo } from "../../src/agents/contract.js";
import { fakeDriver, tempDir } from "./support/fake-agent.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function wellFormed(seen: SpawnInfo[]): void {
  for (const s of seen) {
    expect(s.pid).toBeGreaterThan(1);
    expect(s.pgid).toBe(s.pid); // it leads its own group
    expect(s.startTime).toBeGreaterThan(0);
    expect(s.marker).toMatch(UUID);
  }
  expect(new Set(seen.map((s) => s.marker)).size).toBe(seen.length);
}

describe("onSpawn", () => {
  it("the CLI driver reports its agent process", async () => {
    const ws = tempDir();
    try {
      const seen: SpawnInfo[] = [];
      const r = await fakeDriver({}).run({ prompt: "hi", cwd: ws.path }, { onSpawn: (i) => seen.push(i) });
      expect(r.status, r.error?.message).toBe("ok");
      expect(seen).toHaveLength(1);
      wellFormed(seen);
    } finally {
      ws.cleanup();
    }
  });

  it("the scripted driver reports each shell step's process; a step without shell starts none", async () => {
    const ws = tempDir();
    try {
      const seen: SpawnInfo[] = [];
      const driver = new ScriptedDriver({ steps: [{ shell: ["true", "echo x > x.txt"], text: "done" }, { text: "no shell" }] });
      expect((await driver.run({ prompt: "p", cwd: ws.path }, { onSpawn: (i) => seen.push(i) })).status).toBe("ok");
      expect(seen).toHaveLength(2);
      wellFormed(seen);
      expect((await driver.run({ prompt: "p", cwd: ws.path }, { onSpawn: (i) => seen.push(i) })).status).toBe("ok");
      expect(seen).toHaveLength(2);
    } finally {
      ws.cleanup();
    }
  });

  it("the HTTP driver's shell tool reports its command's process", async () => {
    const ws = tempDir();
    try {
      const seen: SpawnInfo[] = [];
      const tools = new ToolRunner(ws.path, { parentEnv: { PATH: process.env.PATH }, onSpawn: (i) => seen.push(i) });
      expect((await tools.run("shell", { command: "echo ok" })).ok).toBe(true);
      expect(seen).toHaveLength(1);
      wellFormed(seen);
    } finally {
      ws.cleanup();
    }
  });
});
