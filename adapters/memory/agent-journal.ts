/** The agent's run journal (what `pulse agent resume` continues from) in memory (`--store memory:` and tests): nothing survives the process. */
import type { AgentRunRecord, RunJournal, RunPatch } from "../../src/coding/agent/run-journal.js";

export class MemoryAgentJournal implements RunJournal {
  private readonly rows = new Map<string, AgentRunRecord>();

  async begin(record: AgentRunRecord): Promise<void> {
    this.rows.set(record.runId, structuredClone(record));
  }

  async update(runId: string, patch: RunPatch): Promise<void> {
    const r = this.rows.get(runId);
    if (r) this.rows.set(runId, structuredClone({ ...r, ...patch, updatedAt: new Date().toISOString() }));
  }

  async get(runId: string): Promise<AgentRunRecord | undefined> {
    const r = this.rows.get(runId);
    return r ? structuredClone(r) : undefined;
  }

  async list(limit = 100): Promise<AgentRunRecord[]> {
    return [...this.rows.values()].sort((a, b) => b.startedAt.localeCompare(a.startedAt)).slice(0, limit).map((r) => structuredClone(r));
  }

  async close(): Promise<void> {}
}
