/**
 * A TCP relay between a host and PostgreSQL that breaks the connection carrying the next
 * commit_units call at a chosen moment, then refuses connections for 700 ms (a server restarting).
 */
import { createServer, connect as tcpConnect, type Server, type Socket } from "node:net";

/** Breaks the connection carrying the next commit_units call: after the server's answer, or before the server sees the call. */
export class Relay {
  /** after: the server's answer to it never arrives; before: the server never sees it; answered: it is answered, then the server goes away. */
  cut: "after" | "before" | "answered" | undefined;
  /** What the call to break contains (the SQL text or the prepared statement's name). */
  on = "commit_units";
  private refusing = false;
  private readonly sockets = new Set<Socket>();
  private readonly server: Server;
  port = 0;

  constructor(target: URL) {
    this.server = createServer((inbound) => {
      if (this.refusing) return void inbound.destroy();
      const outbound = tcpConnect(Number(target.port || 5432), target.hostname);
      let answerCuts: "after" | "answered" | undefined;
      for (const sock of [inbound, outbound]) (this.sockets.add(sock), sock.on("error", () => undefined), sock.on("close", () => this.sockets.delete(sock)));
      inbound.on("data", (chunk: Buffer) => {
        if (this.cut !== undefined && chunk.includes(this.on)) {
          const when = this.cut;
          this.cut = undefined;
          if (when === "before") return this.outage();
          answerCuts = when;
        }
        outbound.write(chunk);
      });
      outbound.on("data", (chunk: Buffer) => {
        if (answerCuts === "after") return this.outage();
        inbound.write(chunk);
        if (answerCuts === "answered") setImmediate(() => this.outage());
      });
    });
  }

  async listen(): Promise<void> {
    await new Promise<void>((r) => this.server.listen(0, "127.0.0.1", r));
    this.port = (this.server.address() as { port: number }).port;
  }

  /** Every connection broken, and new ones refused for 700 ms: the server restarting. */
  private outage(): void {
    this.refusing = true;
    for (const s of this.sockets) s.destroy();
    setTimeout(() => (this.refusing = false), 700);
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}

