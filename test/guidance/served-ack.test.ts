/**
 * Acknowledgements made during a turn through the sidecar itself rather than as a tool call the
 * driver reports: `pulse guidance ack` from the agent's shell (an agent without the MCP tool),
 * and the guidance tools of the MCP server an agent of a session is handed (`pulse session mcp
 * --session ID`), which answer for that session's working directory only.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { describe, expect, it } from "vitest";
import { steerSession } from "../../src/coding/session/steer.js";
import { runBin } from "../cli/run-bin.js";
import { gitRepo, harness, newSession, removeDir, tempRepos, worktreesRoot } from "../session/helpers.js";
import { BIN } from "./serve-process.js";

const repo = tempRepos();
const PULSE = `"${process.execPath}" "${BIN}"`;

describe("an acknowledgement made during the turn", () => {
  it("through pulse guidance ack in the agent's shell counts (via served), and the session goes on", async () => {
    const dir = repo();
    const ack = `${PULSE} guidance ack "$(${PULSE} guidance status --json | sed -E 's/.*"pending_replan_event_id":"([^"]+)".*/\\1/')"`;
    const h = await harness({
      steps: [
        { match: { iteration: 1 }, files: { ".pulse/plan.md": "# Plan\n" }, shell: [ack], text: "Replanned. <signal>CONTINUE</signal>" },
        { match: { iteration: 2 }, text: "<signal>COMPLETE</signal>" },
      ],
    });
    const id = await newSession(h.records, dir);
    const steered = await steerSession(h.records, id, "Smaller patches", "cli");
    const final = await h.runner.run(id);
    expect(final).toMatchObject({ status: "complete", current_iteration: 2 });
    const acks = (await h.records.events(id, 0, 1000)).filter((e) => e.type === "guidance.acknowledged").map((e) => (e.data as { ack: object }).ack);
    expect(acks).toEqual([expect.objectContaining({ accepted: true, acknowledged_event_id: steered.event!.id, via: "served" })]);
    expect(h.driver.calls[1]!.prompt).not.toContain("STOP");
  }, 60_000);

  it("through the session's own MCP server: pulse_should_interrupt and pulse_ack_replan answer for its working directory", async () => {
    const dir = gitRepo();
    try {
      const store = join(dir, ".git", "pulse.db");
      const script = join(dir, ".git", "s.json");
      writeFileSync(script, JSON.stringify({ steps: [{ match: { iteration: 1 }, text: "<signal>BLOCKED: which API?</signal>" }, { match: { iteration: 2 }, text: "<signal>COMPLETE</signal>" }] }));
      const env = { PULSE_WORKTREES: worktreesRoot() };
      expect(runBin("pulse", ["session", "start", "--store", store, "--repo", dir, "--in-place", "--goal", "g", "--driver", "scripted", "--script", script], { cwd: dir, env }).code).toBe(4);
      const [s] = JSON.parse(runBin("pulse", ["session", "list", "--store", store, "--json"], { cwd: dir, env }).stdout) as { id: string }[];
      expect(runBin("pulse", ["session", "steer", "--store", store, s!.id, "Use the v2 API"], { cwd: dir, env }).code).toBe(0);
      const client = new Client({ name: "agent", version: "1.0.0" });
      await client.connect(new StdioClientTransport({ command: process.execPath, args: [BIN, "session", "mcp", "--store", store, "--session", s!.id], cwd: dir, env: { PATH: process.env.PATH ?? "", HOME: dir, ...env }, stderr: "pipe" }));
      try {
        const d = (await client.callTool({ name: "pulse_should_interrupt", arguments: {} })).structuredContent as { needs_replan: boolean; pending_replan_event_id: string };
        expect(d.needs_replan).toBe(true);
        expect((await client.callTool({ name: "pulse_ack_replan", arguments: { event_id: "evt_20000101T000000000000Z_00000000" } })).structuredContent).toMatchObject({ accepted: false, reason: "Event evt_20000101T000000000000Z_00000000 was not found." });
        writeFileSync(join(dir, ".pulse/plan.md"), "# Plan\n\nv2\n");
        expect((await client.callTool({ name: "pulse_ack_replan", arguments: { event_id: d.pending_replan_event_id } })).structuredContent).toMatchObject({ accepted: true, acknowledged_event_id: d.pending_replan_event_id });
      } finally {
        await client.close();
      }
      // Acknowledged: the resumed session is not held, and completes in its next turn.
      const resumed = runBin("pulse", ["session", "resume", "--store", store, s!.id], { cwd: dir, env });
      expect(resumed.code, resumed.stdout + resumed.stderr).toBe(0);
      const events = runBin("pulse", ["session", "logs", s!.id, "--store", store, "--events", "--json"], { cwd: dir, env }).stdout;
      expect(events).toContain('"type":"guidance.steered"');
      expect(events).not.toContain('"type":"guidance.held"');
    } finally {
      removeDir(dir);
    }
  }, 90_000);
});
