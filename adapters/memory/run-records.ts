/**
 * The common view of every coding loop's runs in memory: the shared mapping (run-views.ts) over
 * the memory records of sessions, workflows and agent runs.
 */
import { ComposedRunRecords, type RunSources } from "../../src/coding/run-views.js";
import { MemoryAgentRuns } from "./agent-runs.js";
import { MemorySessionRecords } from "./session-records.js";
import { MemoryWorkflowRecords } from "./workflow-records.js";

export class MemoryRunRecords extends ComposedRunRecords {
  constructor(readonly records: Required<RunSources> & { sessions: MemorySessionRecords; workflows: MemoryWorkflowRecords; agents: MemoryAgentRuns }) {
    super(records);
  }

  static create(now?: () => string): MemoryRunRecords {
    return new MemoryRunRecords({ sessions: new MemorySessionRecords(now), workflows: new MemoryWorkflowRecords(now), agents: new MemoryAgentRuns(now) });
  }
}
