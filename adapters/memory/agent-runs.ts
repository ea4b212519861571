/**
 * Agent run records in memory (`pulse agent --store memory:`, tests). Copies in and out, so a
 * caller never mutates what is stored.
 */
import { AgentRunRecordsError, newAgentRunRecord, type AgentRunPatch, type AgentRunRecord, type AgentRunRecords, type AgentStepRecord, type NewAgentRun } from "../../src/coding/agent/run-records.js";

export class MemoryAgentRuns implements AgentRunRecords {
  private readonly runs = new Map<string, AgentRunRecord>();
  private readonly stepsOf = new Map<string, AgentStepRecord[]>();

  constructor(private readonly now: () => string = () => new Date().toISOString()) {}

  async create(run: NewAgentRun): Promise<AgentRunRecord> {
    if (this.runs.has(run.id)) throw new AgentRunRecordsError("EXISTS", `agent run ${run.id} already exists`);
    const record = newAgentRunRecord(run, this.now());
    this.runs.set(record.id, record);
    return structuredClone(record);
  }

  async get(id: string): Promise<AgentRunRecord | undefined> {
    let found = this.runs.get(id);
    if (!found && id.length >= 4) {
      const hits = [...this.runs.values()].filter((r) => r.id.startsWith(id));
      found = hits.length === 1 ? hits[0] : undefined;
    }
    return found && structuredClone(found);
  }

  async list(): Promise<AgentRunRecord[]> {
    return [...this.runs.values()].sort((a, b) => b.created_at.localeCompare(a.created_at) || (a.id < b.id ? 1 : -1)).map((r) => structuredClone(r));
  }

  async update(id: string, patch: AgentRunPatch): Promise<AgentRunRecord> {
    const r = this.runs.get(id);
    if (!r) throw new AgentRunRecordsError("NOT_FOUND", `no agent run ${id}`);
    Object.assign(r, structuredClone(patch), { updated_at: this.now() });
    return structuredClone(r);
  }

  async addStep(step: AgentStepRecord): Promise<AgentStepRecord> {
    if (!this.runs.has(step.run_id)) throw new AgentRunRecordsError("NOT_FOUND", `no agent run ${step.run_id}`);
    const steps = this.stepsOf.get(step.run_id) ?? [];
    if (steps.some((s) => s.number === step.number)) throw new AgentRunRecordsError("EXISTS", `agent run ${step.run_id} already has step ${step.number}`);
    steps.push(structuredClone(step));
    steps.sort((a, b) => a.number - b.number);
    this.stepsOf.set(step.run_id, steps);
    return structuredClone(step);
  }

  async steps(runId: string): Promise<AgentStepRecord[]> {
    return structuredClone(this.stepsOf.get(runId) ?? []);
  }

  async close(): Promise<void> {}
}
