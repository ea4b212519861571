/** The agent processes a session has running, in memory: for tests and a store kept in memory. */
import type { SpawnInfo } from "../../src/agents/contract.js";
import type { AgentProcessRecord, AgentProcesses } from "../../src/coding/agent-processes.js";

export class MemoryAgentProcesses implements AgentProcesses {
  private rows: AgentProcessRecord[] = [];

  async record(sessionId: string, iteration: number, info: SpawnInfo): Promise<void> {
    this.rows = this.rows.filter((r) => !(r.session_id === sessionId && r.marker === info.marker));
    this.rows.push({ session_id: sessionId, iteration, pid: info.pid, pgid: info.pgid, startTime: info.startTime, marker: info.marker, runner_pid: process.pid, recorded_at: new Date().toISOString() });
  }

  async remove(sessionId: string, iteration?: number): Promise<void> {
    this.rows = this.rows.filter((r) => !(r.session_id === sessionId && (iteration === undefined || r.iteration === iteration)));
  }

  async list(sessionId: string): Promise<AgentProcessRecord[]> {
    return this.rows.filter((r) => r.session_id === sessionId).map((r) => ({ ...r }));
  }

  async runs(): Promise<string[]> {
    return [...new Set(this.rows.map((r) => r.session_id))];
  }

  async close(): Promise<void> {}
}
