import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { desktopChannel, messages, Notifier, terminalChannel, webhookChannel, type NotifierChannel } from "../../src/coding/notifier.js";

describe("notifier", () => {
  it("formats the seed's messages", () => {
    expect(messages.iteration(3, 10, "Built login component")).toBe("Iteration 3/10: Built login component. Continuing...");
    expect(messages.complete(5, 3)).toBe("Session complete (5 iterations, 3 commits)");
    expect(messages.complete(1, 1)).toBe("Session complete (1 iteration, 1 commit)");
    expect(messages.blocked("Need API key for Stripe integration")).toBe("Blocked: Need API key for Stripe integration.");
  });

  it("posts JSON to a webhook, and writes to the terminal", async () => {
    const bodies: unknown[] = [];
    const server = createServer((req, res) => {
      let b = "";
      req.on("data", (c) => (b += c));
      req.on("end", () => {
        bodies.push({ type: req.headers["content-type"], auth: req.headers.authorization, body: JSON.parse(b) });
        res.end("ok");
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const lines: string[] = [];
    const n = new Notifier([webhookChannel(`http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, { headers: { authorization: "Bearer t" } }), terminalChannel((l) => lines.push(l))]);
    n.notify({ kind: "complete", message: messages.complete(2, 1), sessionId: "s1" });
    await n.flush();
    server.close();
    expect(bodies).toEqual([{ type: "application/json", auth: "Bearer t", body: expect.objectContaining({ kind: "complete", message: "Session complete (2 iterations, 1 commit)", text: "Session complete (2 iterations, 1 commit)", sessionId: "s1" }) }]);
    expect(lines).toEqual(["✅ Session complete (2 iterations, 1 commit)\n"]);
  });

  it("never blocks or fails the loop: a hanging, a refusing and a throwing channel", async () => {
    const errors: string[] = [];
    const hanging: NotifierChannel = { name: "hang", send: (_n, signal) => new Promise((_r, reject) => signal.addEventListener("abort", () => reject(signal.reason))) };
    const throwing: NotifierChannel = {
      name: "throw",
      send: () => {
        throw new Error("boom");
      },
    };
    const n = new Notifier([hanging, throwing, webhookChannel("http://127.0.0.1:9/unreachable")], { timeoutMs: 200, retryDelaysMs: [], onError: (c, e) => errors.push(`${c}: ${e.message}`) });
    const t0 = performance.now();
    n.notify({ kind: "info", message: "x" });
    expect(performance.now() - t0).toBeLessThan(50); // returned at once
    await n.flush();
    expect(errors.sort()).toEqual([expect.stringMatching(/^hang: .*no answer within 200 ms/), "throw: boom", expect.stringMatching(/^webhook 127\.0\.0\.1:9: /)]);
    expect(() => webhookChannel("file:///etc/passwd")).toThrow(/http/);
  });

  it("desktop falls back to the terminal when there is no notifier", async () => {
    const lines: string[] = [];
    const n = new Notifier([desktopChannel(terminalChannel((l) => lines.push(l)), "win32")]);
    n.notify({ kind: "blocked", message: "Blocked: x." });
    await n.flush();
    expect(lines).toEqual(["⏸️ Blocked: x.\n"]);
    const linux = new Notifier([desktopChannel(terminalChannel((l) => lines.push(l)), "linux")]);
    linux.notify({ kind: "info", message: "via notify-send or the terminal" });
    await linux.flush(); // notify-send is usually absent here: the terminal gets it; either way no error
  });
});
