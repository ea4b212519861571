/**
 * Drives an adapter running as a subprocess: requests as lines on its stdin, responses as lines
 * on its stdout, its stderr kept as evidence. A crash, a hang (no answer within the timeout), a
 * line that is not a JSON-RPC response or a response to an id never sent is a DriverFailure:
 * the run stops as a driver failure and nothing is reported as passed.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { DEFAULT_CALL_TIMEOUT_MS, DriverFailure, type Driver, type MessageCheck } from "./driver.js";
import { parseResponse, request, resultOf } from "./jsonrpc.js";
import { readLines } from "./line-reader.js";
import { endSessionOnExit, killSession, newSessionMark, releaseSession, SESSION_VARIABLE, type AdapterProcesses } from "./process-cleanup.js";
import type { Method, Methods } from "./protocol.js";

const STDERR_LINES = 40;
/** The longest message line an adapter may write on stdout (docs/conformance/driver-protocol.md). */
export const MAX_MESSAGE_BYTES = 16 << 20;
/** stderr is evidence: longer lines are cut to this. */
const MAX_STDERR_LINE_BYTES = 4096;

interface Pending {
  method: string;
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

export class StdioDriver implements Driver {
  readonly describe: string;
  private readonly child: ChildProcess;
  private readonly processes: AdapterProcesses | undefined;
  private readonly pending = new Map<number, Pending>();
  private readonly stderr: string[] = [];
  private nextId = 1;
  private failure: DriverFailure | undefined;

  constructor(
    command: string,
    private readonly check?: MessageCheck,
  ) {
    this.describe = `--driver ${JSON.stringify(command)}`;
    // Its own process group: the command runs under `sh -c`, and killing only the shell would
    // orphan the adapter, which keeps our pipes open and the harness from ever exiting.
    const mark = newSessionMark();
    this.child = spawn(command, { shell: true, detached: true, stdio: ["pipe", "pipe", "pipe"], env: { ...process.env, [SESSION_VARIABLE]: mark } });
    this.processes = this.child.pid === undefined ? undefined : { pid: this.child.pid, mark };
    if (this.processes) endSessionOnExit(this.processes);
    readLines(this.child.stdout!, {
      maxLineBytes: MAX_MESSAGE_BYTES,
      overflow: "fail",
      onLine: (line) => this.onLine(line),
      onOverflow: () =>
        this.fail(new DriverFailure(`the adapter wrote more than ${MAX_MESSAGE_BYTES >> 20} MiB on stdout without ending the line (a message is one line of at most ${MAX_MESSAGE_BYTES >> 20} MiB; log to stderr)`)),
    });
    readLines(this.child.stderr!, {
      maxLineBytes: MAX_STDERR_LINE_BYTES,
      overflow: "truncate",
      onLine: (line) => {
        this.stderr.push(line);
        if (this.stderr.length > STDERR_LINES) this.stderr.shift();
      },
    });
    this.child.on("error", (e) => this.fail(new DriverFailure(`could not start the adapter (${command}): ${e.message}`)));
    // 'exit' can come before the last stdout and stderr lines are read: wait for the pipes to
    // drain ('close') so a response written just before exiting still resolves its call and the
    // stderr tail holds the adapter's last words; but not for long, since a grandchild process
    // may hold the pipes open.
    const drained = new Promise<void>((resolve) => this.child.once("close", () => resolve()));
    this.child.on("exit", (code, signal) => {
      const failure = new DriverFailure(`the adapter exited (${signal ? `signal ${signal}` : `code ${code}`})`);
      void Promise.race([drained, new Promise((r) => setTimeout(r, 200).unref())]).then(() => this.fail(failure));
    });
    this.child.stdin!.on("error", () => undefined);
  }

  private onLine(line: string): void {
    if (line.trim() === "") return;
    try {
      const response = parseResponse(line);
      const p = typeof response.id === "number" ? this.pending.get(response.id) : undefined;
      if (!p) throw new DriverFailure(`the adapter answered id ${JSON.stringify(response.id)}, which no pending request has`);
      this.pending.delete(response.id as number);
      clearTimeout(p.timer);
      try {
        this.check?.("response", p.method, response);
      } catch (e) {
        // The call is no longer pending, so fail() below would not reach it: reject it here.
        const failure = e instanceof DriverFailure ? e : new DriverFailure(String(e));
        p.reject(failure);
        throw failure;
      }
      try {
        p.resolve(resultOf(response, p.method));
      } catch (e) {
        p.reject(e as Error);
      }
    } catch (e) {
      this.fail(e instanceof DriverFailure ? e : new DriverFailure(String(e)));
    }
  }

  private fail(failure: DriverFailure): void {
    if (this.failure) return;
    this.failure = failure;
    for (const [id, p] of this.pending) {
      clearTimeout(p.timer);
      p.reject(failure);
      this.pending.delete(id);
    }
  }

  call<M extends Method>(method: M, params: Methods[M][0], options: { timeoutMs?: number } = {}): Promise<Methods[M][1]> {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.nextId++;
    const message = request(id, method, params);
    try {
      this.check?.("request", method, message);
    } catch (e) {
      return Promise.reject(e as Error);
    }
    return new Promise((resolve, reject) => {
      const timeoutMs = options.timeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
      const timer = setTimeout(() => this.fail(new DriverFailure(`the adapter did not answer ${method} within ${timeoutMs} ms`)), timeoutMs);
      this.pending.set(id, { method, resolve: resolve as (v: unknown) => void, reject, timer });
      this.child.stdin!.write(JSON.stringify(message) + "\n");
    });
  }

  stderrTail(): string[] {
    return [...this.stderr];
  }

  /** The process group the adapter runs in (its shell's pid): for tests that check nothing survives. */
  get processGroup(): number | undefined {
    return this.child.pid;
  }

  async close(): Promise<void> {
    if (!this.failure) {
      await this.call("shutdown", {}, { timeoutMs: 2_000 }).catch(() => undefined);
    }
    this.failure ??= new DriverFailure("closed");
    if (this.child.exitCode === null && this.child.signalCode === null) {
      const exited = new Promise((r) => this.child.once("exit", r));
      this.child.stdin!.end();
      const timer = setTimeout(() => this.processes && killSession(this.processes), 2_000);
      await exited;
      clearTimeout(timer);
    }
    // Whatever the adapter started ends with the session, even after its shell exited
    // (process-cleanup.ts says what that covers); and a process that escaped must not keep the
    // harness waiting on its pipes.
    if (this.processes) {
      killSession(this.processes);
      releaseSession(this.processes);
    }
    for (const stream of [this.child.stdin, this.child.stdout, this.child.stderr]) stream?.destroy();
  }
}
