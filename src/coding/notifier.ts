/**
 * Notifications of a coding loop: terminal, webhook (JSON POST), desktop (notify-send or
 * osascript, falling back to the terminal). Fire and forget: `notify` returns at once, a slow
 * or failing channel never blocks or fails the loop, and failures are only reported to
 * `onError`. The seed's messages ("Iteration 3/10: … Continuing...") are formatted here.
 */
import { spawn } from "node:child_process";

export type NotificationKind = "iteration" | "complete" | "blocked" | "failed" | "info";

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
  /** A channel taking longer than this is abandoned (default 5 s). */
  timeoutMs?: number;
  onError?: (channel: string, error: Error) => void;
}

export class Notifier {
  private readonly pending = new Set<Promise<void>>();

  constructor(
    private readonly channels: readonly NotifierChannel[],
    private readonly options: NotifierOptions = {},
  ) {}

  /** Sends to every channel in the background; never throws, never waits. */
  notify(notification: Notification): void {
    for (const channel of this.channels) {
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort(new Error(`${channel.name}: no answer within ${this.options.timeoutMs ?? 5000} ms`)), this.options.timeoutMs ?? 5000);
      timer.unref();
      let p: Promise<void>;
      try {
        p = channel.send(notification, controller.signal);
      } catch (e) {
        p = Promise.reject(e);
      }
      const tracked = p
        .catch((e: unknown) => {
          try {
            this.options.onError?.(channel.name, e instanceof Error ? e : new Error(String(e)));
          } catch {
            // a failing error handler must not fail the loop either
          }
        })
        .finally(() => {
          clearTimeout(timer);
          this.pending.delete(tracked);
        });
      this.pending.add(tracked);
    }
  }

  /** Waits for notifications in flight (at shutdown, and in tests). */
  async flush(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }
}

const ICONS: Record<NotificationKind, string> = { iteration: "📍", complete: "✅", blocked: "⏸️", failed: "❌", info: "ℹ️" };

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
    send: async (n, signal) => {
      const res = await fetch(parsed, { method: "POST", headers: { "content-type": "application/json", ...options.headers }, body: JSON.stringify({ ...n, text: n.message, time: new Date().toISOString() }), signal });
      await res.body?.cancel();
      if (!res.ok) throw new Error(`webhook answered HTTP ${res.status}`);
    },
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
