/**
 * Notifications of a coding loop: terminal, webhook (JSON POST), desktop (notify-send or
 * osascript, falling back to the terminal); the chat channels (Telegram, SMS, Discord, Slack) are
 * in notify/. Fire and forget: `notify` returns at once, a slow or failing channel never blocks
 * or fails the loop (retried with backoff), and a failed delivery is reported to `onError` once. The seed's messages ("Iteration 3/10: … Continuing...") are formatted here.
 */
import { spawn } from "node:child_process";
import { PermanentDeliveryError, post } from "./notify/http.js";

export { PermanentDeliveryError };

export type NotificationKind = "iteration" | "complete" | "blocked" | "failed" | "info" | "waiting";

export interface Notification {
  kind: NotificationKind;
  /** One line a person reads: "Iteration 3/10: Built login component. Continuing..." */
  message: string;
  loopId?: string;
  sessionId?: string;
  iteration?: number;
  data?: Record<string, unknown>;
}

export interface NotifierChannel {
  readonly name: string;
  send(notification: Notification, signal: AbortSignal): Promise<void>;
}

export interface NotifierOptions {
  /** One try taking longer than this is abandoned (default 10 s). */
  timeoutMs?: number;
  /** Waits before the 2nd, 3rd, … try (default 1 s, 4 s: three tries). */
  retryDelaysMs?: readonly number[];
  /** Notifications a channel may have waiting; beyond it the oldest is dropped (default 100). */
  maxQueued?: number;
  /** Called once per channel per notification that could not be delivered (after its last try). */
  onError?: (channel: string, error: Error) => void;
}

interface Queue {
  items: Notification[];
  running?: Promise<void>;
  current?: AbortController;
}

/**
 * Each channel has a queue of its own, worked through in order (a chat reads in order) in the
 * background: `notify` only appends, so a slow or dead channel never blocks the loop or the
 * other channels. Channels attached to a session (a REST/MCP start naming them) get only that
 * session's notifications.
 */
export class Notifier {
  private readonly queues = new Map<NotifierChannel, Queue>();
  private readonly bySession = new Map<string, NotifierChannel[]>();
  private closed = false;

  constructor(
    private readonly channels: readonly NotifierChannel[],
    private readonly options: NotifierOptions = {},
  ) {}

  /** Also sends this session's notifications to these channels. */
  attach(sessionId: string, channels: readonly NotifierChannel[]): void {
    if (channels.length > 0) this.bySession.set(sessionId, [...(this.bySession.get(sessionId) ?? []), ...channels]);
  }

  /** Queues the notification for every channel; never throws, never waits. */
  notify(notification: Notification): void {
    if (this.closed) return;
    const extra = notification.sessionId !== undefined ? (this.bySession.get(notification.sessionId) ?? []) : [];
    for (const channel of [...this.channels, ...extra]) {
      let q = this.queues.get(channel);
      if (!q) this.queues.set(channel, (q = { items: [] }));
      q.items.push(notification);
      const max = this.options.maxQueued ?? 100;
      if (q.items.length > max) {
        q.items.splice(0, q.items.length - max);
        this.report(channel, new Error(`more than ${max} notifications waiting: the oldest dropped`));
      }
      if (!q.running) q.running = this.drain(channel, q);
    }
  }

  /**
   * Waits for the notifications queued and in flight (at shutdown, and in tests), at most
   * `boundMs` (default 20 s): what is still undelivered then is abandoned, said in one line per channel.
   */
  async flush(boundMs = 20_000): Promise<void> {
    const deadline = Date.now() + boundMs;
    for (;;) {
      const running = [...this.queues.values()].flatMap((q) => (q.running ? [q.running] : []));
      if (running.length === 0) return;
      const left = deadline - Date.now();
      let timer: NodeJS.Timeout | undefined;
      const timedOut = await Promise.race([Promise.all(running).then(() => false), new Promise<boolean>((r) => (timer = setTimeout(() => r(true), Math.max(0, left))))]);
      clearTimeout(timer);
      if (!timedOut) continue;
      for (const [channel, q] of this.queues) {
        if (!q.running) continue;
        const n = q.items.length;
        q.items.length = 0;
        q.current?.abort(new Error("shutting down"));
        this.report(channel, new Error(`${n} notification${n === 1 ? "" : "s"} not delivered within ${boundMs} ms of shutting down`));
      }
      this.closed = true;
      return;
    }
  }

  private async drain(channel: NotifierChannel, q: Queue): Promise<void> {
    while (q.items.length > 0) {
      const n = q.items.shift()!;
      const error = await this.deliver(channel, n, q);
      if (error && !this.closed) this.report(channel, error);
    }
    q.running = undefined;
  }

  /** Tries, and tries again after the delays; the last error, or undefined when delivered. */
  private async deliver(channel: NotifierChannel, n: Notification, q: Queue): Promise<Error | undefined> {
    const delays = this.options.retryDelaysMs ?? [1000, 4000];
    const timeoutMs = this.options.timeoutMs ?? 10_000;
    let last: Error | undefined;
    for (let attempt = 0; attempt <= delays.length; attempt++) {
      if (attempt > 0) await sleep(delays[attempt - 1]!);
      if (this.closed) return undefined;
      const controller = (q.current = new AbortController());
      const timer = setTimeout(() => controller.abort(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      try {
        await Promise.race([
          Promise.resolve().then(() => channel.send(n, controller.signal)),
          new Promise<never>((_r, reject) => controller.signal.addEventListener("abort", () => reject(controller.signal.reason as Error), { once: true })),
        ]);
        return undefined;
      } catch (e) {
        last = e instanceof Error ? e : new Error(String(e));
        if (last instanceof PermanentDeliveryError) break;
      } finally {
        clearTimeout(timer);
        q.current = undefined;
      }
    }
    const tries = delays.length + 1;
    return last && !(last instanceof PermanentDeliveryError) && tries > 1 ? new Error(`${last.message} (${tries} tries)`) : last;
  }

  private report(channel: NotifierChannel, error: Error): void {
    try {
      this.options.onError?.(channel.name, error);
    } catch {
      // a failing error handler must not fail the loop either
    }
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms).unref());
}

const ICONS: Record<NotificationKind, string> = { iteration: "📍", complete: "✅", blocked: "⏸️", failed: "❌", info: "ℹ️", waiting: "⏳" };

/** A notification as a chat message: its icon, its line, and the session it is about. */
export function textOf(n: Notification): string {
  return `${ICONS[n.kind]} ${n.message}${n.sessionId ? ` (pulse session ${n.sessionId.slice(0, 8)})` : ""}`;
}

export function terminalChannel(write: (line: string) => void = (l) => void process.stderr.write(l)): NotifierChannel {
  return {
    name: "terminal",
    send: async (n) => write(`${ICONS[n.kind]} ${n.message}\n`),
  };
}

/** POSTs the notification as JSON. Only http(s) URLs; extra headers (an auth token) allowed. */
export function webhookChannel(url: string, options: { headers?: Record<string, string> } = {}): NotifierChannel {
  const parsed = new URL(url);
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") throw new Error(`webhook URL must be http:// or https://, got ${url}`);
  return {
    name: `webhook ${parsed.host}`,
    send: (n, signal) => post("the webhook", { url: parsed, headers: { "content-type": "application/json", ...options.headers }, body: JSON.stringify({ ...n, text: n.message, time: new Date().toISOString() }) }, signal),
  };
}

/** A desktop notification where the machine has a notifier, the terminal otherwise. */
export function desktopChannel(fallback: NotifierChannel = terminalChannel(), platform: NodeJS.Platform = process.platform): NotifierChannel {
  const command: [string, (n: Notification) => string[]] | undefined =
    platform === "darwin" ? ["osascript", (n) => ["-e", `display notification ${JSON.stringify(n.message)} with title "pulse"`]] : platform === "linux" ? ["notify-send", (n) => ["pulse", n.message]] : undefined;
  return {
    name: "desktop",
    send: (n, signal) =>
      new Promise<void>((resolve) => {
        if (!command) return void fallback.send(n, signal).then(resolve, resolve);
        const child = spawn(command[0], command[1](n), { stdio: "ignore", signal });
        child.on("error", () => void fallback.send(n, signal).then(resolve, resolve));
        child.on("exit", (code) => (code === 0 ? resolve() : void fallback.send(n, signal).then(resolve, resolve)));
      }),
  };
}

// Seed 000's messages.
export const messages = {
  iteration: (n: number, max: number, summary: string): string => `Iteration ${n}/${max > 0 ? max : "∞"}: ${oneLine(summary)} Continuing...`,
  complete: (iterations: number, commits: number): string => `Session complete (${iterations} iteration${iterations === 1 ? "" : "s"}, ${commits} commit${commits === 1 ? "" : "s"})`,
  blocked: (reason: string): string => `Blocked: ${oneLine(reason)}`,
};

function oneLine(text: string): string {
  const line = text.replace(/\s+/g, " ").trim();
  const cut = line.length > 160 ? `${line.slice(0, 157)}…` : line;
  return /[.!?…]$/.test(cut) ? cut : `${cut}.`;
}
