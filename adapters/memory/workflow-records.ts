/**
 * The pulsing workflow's records in memory: for tests and the common run view's memory
 * implementation (the CLI keeps workflows in a file or PostgreSQL, which another process can
 * stop or resume). Copies in and out, so a caller never mutates what is stored.
 */
import {
  newPulseRecord,
  newWorkflowRecord,
  WorkflowRecordsError,
  type NewPulse,
  type NewWorkflow,
  type PreflightBaseline,
  type PreflightSetup,
  type PulsePatch,
  type PulseRecord,
  type WorkflowEventRecord,
  type WorkflowPatch,
  type WorkflowRecord,
  type WorkflowRecords,
} from "../../src/coding/workflow/records.js";

export class MemoryWorkflowRecords implements WorkflowRecords {
  private readonly workflows = new Map<string, WorkflowRecord>();
  private readonly pulsesById = new Map<string, PulseRecord>();
  private readonly setups = new Map<string, PreflightSetup>();
  private readonly baselineRows: PreflightBaseline[] = [];
  private readonly eventsOf = new Map<string, WorkflowEventRecord[]>();

  constructor(private readonly now: () => string = () => new Date().toISOString()) {}

  async create(workflow: NewWorkflow, pulses: Omit<NewPulse, "workflow_id">[]): Promise<WorkflowRecord> {
    if (this.workflows.has(workflow.id)) throw new WorkflowRecordsError("EXISTS", `workflow ${workflow.id} already exists`);
    const now = this.now();
    const record = newWorkflowRecord(workflow, now);
    this.workflows.set(record.id, record);
    for (const p of pulses) this.pulsesById.set(p.id, newPulseRecord({ ...p, workflow_id: record.id }, now));
    return structuredClone(record);
  }

  async get(id: string): Promise<WorkflowRecord | undefined> {
    let found = this.workflows.get(id);
    if (!found && id.length >= 4) {
      const hits = [...this.workflows.values()].filter((w) => w.id.startsWith(id));
      found = hits.length === 1 ? hits[0] : undefined;
    }
    return found && structuredClone(found);
  }

  async list(): Promise<WorkflowRecord[]> {
    return [...this.workflows.values()].sort((a, b) => b.created_at.localeCompare(a.created_at) || (a.id < b.id ? 1 : -1)).map((w) => structuredClone(w));
  }

  async update(id: string, patch: WorkflowPatch): Promise<WorkflowRecord> {
    const w = this.workflows.get(id);
    if (!w) throw new WorkflowRecordsError("NOT_FOUND", `no workflow ${id}`);
    Object.assign(w, structuredClone(patch), { updated_at: this.now() });
    return structuredClone(w);
  }

  async pulses(workflowId: string): Promise<PulseRecord[]> {
    return [...this.pulsesById.values()].filter((p) => p.workflow_id === workflowId).sort((a, b) => a.number - b.number).map((p) => structuredClone(p));
  }

  async updatePulse(id: string, patch: PulsePatch): Promise<PulseRecord> {
    const p = this.pulsesById.get(id);
    if (!p) throw new WorkflowRecordsError("NOT_FOUND", `no pulse ${id}`);
    Object.assign(p, structuredClone(patch));
    return structuredClone(p);
  }

  async preflight(workflowId: string): Promise<PreflightSetup | undefined> {
    const s = this.setups.get(workflowId);
    return s && structuredClone(s);
  }

  async putPreflight(setup: PreflightSetup): Promise<PreflightSetup> {
    this.setups.set(setup.workflow_id, structuredClone(setup));
    return structuredClone(setup);
  }

  async addBaselines(baselines: PreflightBaseline[]): Promise<void> {
    this.baselineRows.push(...structuredClone(baselines));
  }

  async baselines(workflowId: string): Promise<PreflightBaseline[]> {
    return structuredClone(this.baselineRows.filter((b) => b.workflow_id === workflowId));
  }

  async appendEvents(workflowId: string, events: Omit<WorkflowEventRecord, "seq">[]): Promise<number> {
    const list = this.eventsOf.get(workflowId) ?? [];
    for (const e of events) list.push({ ...structuredClone(e), seq: list.length + 1 });
    this.eventsOf.set(workflowId, list);
    return list.length;
  }

  async events(workflowId: string, afterSeq = 0, limit = 500): Promise<WorkflowEventRecord[]> {
    return structuredClone((this.eventsOf.get(workflowId) ?? []).filter((e) => e.seq > afterSeq).slice(0, limit));
  }

  async close(): Promise<void> {}
}
