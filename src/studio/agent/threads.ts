/**
 * The agent pages' threads, kept durably under the agent's home (`saves/<thread id>.json`, as
 * seed 002's Studio keeps `saves/`): each written whole to a temporary file then renamed over
 * the old one, so a crash leaves the previous version, never half of one. A thread's working
 * directory and actions are fixed once its first task starts.
 */
import { randomUUID } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { StudioError } from "../studio.js";

export type Mode = "auto" | "interactive";

export interface Message {
  role: "user" | "agent";
  text: string;
  ts: string;
  files?: string[];
  runId?: string;
  status?: string;
}

export interface Thread {
  id: string;
  title: string;
  workdir: string;
  actions: string[];
  mode: Mode;
  created_at: string;
  updated_at: string;
  /** Set when the first task starts: the working directory and actions are fixed from then on. */
  started_at: string | null;
  messages: Message[];
}

const ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export class ThreadStore {
  constructor(readonly dir: string) {
    mkdirSync(dir, { recursive: true });
  }

  private file(id: string): string {
    if (!ID.test(id)) throw new StudioError(400, "BAD_THREAD_ID", `a thread id is a UUID, not ${JSON.stringify(id.slice(0, 40))}`);
    return join(this.dir, `${id}.json`);
  }

  /** A thread's own folder (its uploads). */
  folder(id: string): string {
    this.file(id);
    return join(this.dir, id);
  }

  list(): Thread[] {
    const out: Thread[] = [];
    for (const f of readdirSync(this.dir)) {
      if (!f.endsWith(".json") || !ID.test(f.slice(0, -5))) continue;
      try {
        out.push(JSON.parse(readFileSync(join(this.dir, f), "utf8")) as Thread);
      } catch {
        // A file that is not a thread (edited by hand, say) is left alone, not shown.
      }
    }
    return out.sort((a, b) => (a.updated_at < b.updated_at ? 1 : a.updated_at > b.updated_at ? -1 : 0));
  }

  get(id: string): Thread {
    const file = this.file(id);
    if (!existsSync(file)) throw new StudioError(404, "NOT_FOUND", `no thread ${id}`);
    return JSON.parse(readFileSync(file, "utf8")) as Thread;
  }

  create(fields: { title: string; workdir: string; actions: string[]; mode: Mode }): Thread {
    const now = new Date().toISOString();
    const thread: Thread = { id: randomUUID(), ...fields, created_at: now, updated_at: now, started_at: null, messages: [] };
    this.save(thread);
    return thread;
  }

  save(thread: Thread): Thread {
    thread.updated_at = new Date().toISOString();
    const file = this.file(thread.id);
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, `${JSON.stringify(thread, null, 1)}\n`);
    renameSync(tmp, file);
    return thread;
  }

  /** Changes a thread under the rule that its working directory and actions are fixed once a task started. */
  update(id: string, change: (t: Thread) => void): Thread {
    const thread = this.get(id);
    change(thread);
    return this.save(thread);
  }

  remove(id: string): void {
    const file = this.file(id);
    if (!existsSync(file)) throw new StudioError(404, "NOT_FOUND", `no thread ${id}`);
    rmSync(file);
    rmSync(join(this.dir, id), { recursive: true, force: true });
  }
}
