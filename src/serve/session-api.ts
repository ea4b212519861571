/**
 * The session operations `pulse serve` and `pulse session mcp` offer (REST and MCP alike): a
 * started or resumed session runs in this process, in the background; pause and abort reach a
 * session wherever it runs (here directly, elsewhere through the records).
 */
import type { SessionRecord } from "../coding/session/records.js";
import type { SessionRunner } from "../coding/session/runner.js";
import { startInputOf, SessionStateError, type SessionDetail, type SessionService } from "../coding/session/service.js";
import type { CreatedBy } from "../coding/session/records.js";

export class SessionApi {
  private readonly running = new Map<string, Promise<SessionRecord | undefined>>();

  constructor(
    private readonly service: SessionService,
    private readonly runner: SessionRunner,
    private readonly onError: (id: string, error: Error) => void = () => undefined,
  ) {}

  /** Validates the body (SessionInputError names the field), records the session and starts it here. */
  async start(body: unknown, by: CreatedBy): Promise<SessionRecord> {
    const s = await this.service.create(startInputOf(body), by);
    await this.launch(s.id);
    return (await this.service.records.get(s.id))!;
  }

  status(id: string): Promise<SessionDetail> {
    return this.service.get(id);
  }

  list(status?: string): Promise<SessionRecord[]> {
    return this.service.list(status);
  }

  async pause(id: string): Promise<SessionRecord> {
    return (await this.service.pause(id)).session;
  }

  async resume(id: string): Promise<SessionRecord> {
    const { session, live } = await this.service.get(id);
    if (live || this.running.has(session.id)) throw new SessionStateError("NOT_RUNNING", `session ${session.id} is already running`);
    if (session.status === "complete" || session.status === "aborted") throw new SessionStateError("FINISHED", `session ${session.id} is ${session.status}: there is nothing to resume`);
    await this.launch(session.id);
    return (await this.service.records.get(session.id))!;
  }

  async abort(id: string): Promise<SessionRecord> {
    const { session } = await this.service.get(id);
    if (this.runner.isRunning(session.id)) {
      await this.service.records.requestControl(session.id, "abort");
      this.runner.abortHere(session.id);
      await this.running.get(session.id);
      return (await this.service.records.get(session.id))!;
    }
    return (await this.service.abort(session.id)).session;
  }

  /** Sessions this process runs, to wait for at shutdown. */
  async settled(): Promise<void> {
    await Promise.all(this.running.values());
  }

  /** Pauses what this process runs (at shutdown): each stops after its current iteration. */
  async pauseAll(): Promise<void> {
    for (const id of this.running.keys()) await this.service.records.requestControl(id, "pause");
  }

  private async launch(id: string): Promise<void> {
    // Claimed before the runner takes it, so a status, pause or abort right after sees it running.
    await this.service.records.update(id, { status: "running", runner_pid: process.pid });
    const p = this.runner.run(id).catch((e: Error) => {
      this.onError(id, e);
      return undefined;
    });
    this.running.set(id, p);
    void p.finally(() => this.running.delete(id));
  }
}
