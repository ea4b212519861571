// pulse-conform --attach against an adapter that answers without end or redirects: the driver
// reads at most --max-response-bytes, follows no redirect, and fails the run as a driver failure.
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { DriverFailure } from "../../conformance/driver/driver.js";
import { HttpDriver } from "../../conformance/driver/http-driver.js";
import { PROTOCOL_VERSION } from "../../conformance/driver/protocol.js";
import { execFile } from "node:child_process";
import { resolve } from "node:path";
import { ROOT } from "../cli/run-bin.js";

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

async function serve(answer: (res: ServerResponse, id: unknown) => void): Promise<{ url: string; hits: () => number }> {
  let hits = 0;
  const server = createServer((req, res) => {
    hits++;
    let body = "";
    req.on("data", (d: Buffer) => (body += d.toString()));
    req.on("end", () => answer(res, (JSON.parse(body || "{}") as { id?: unknown }).id));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  closers.push(() => new Promise((r) => (server.closeAllConnections(), server.close(() => r()))));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits: () => hits };
}

const hello = (id: unknown, pad = "") =>
  JSON.stringify({ jsonrpc: "2.0", id, result: { protocol_version: PROTOCOL_VERSION, runtime: { name: "x", version: "1", language: "x", pad }, capabilities: {} } });

describe("--attach answers", () => {
  it("an endless answer is cut at the limit: a DriverFailure naming it, not the whole answer in memory", async () => {
    const { url } = await serve((res) => {
      res.writeHead(200, { "content-type": "application/json" });
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      const pump = () => {
        while (!res.destroyed && res.write(chunk));
        if (!res.destroyed) res.once("drain", pump);
      };
      pump();
    });
    const failure = await new HttpDriver(url, undefined, 1024 * 1024).call("hello", { protocol_version: PROTOCOL_VERSION }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(DriverFailure);
    expect((failure as Error).message).toMatch(/longer than the 1048576 bytes allowed \(--max-response-bytes\)/);
  });

  it("a redirect is not followed: the failure names where it pointed", async () => {
    const elsewhere = await serve((res, id) => res.writeHead(200, { "content-type": "application/json" }).end(hello(id)));
    const { url } = await serve((res) => res.writeHead(307, { location: elsewhere.url }).end());
    const failure = await new HttpDriver(url).call("hello", { protocol_version: PROTOCOL_VERSION }).catch((e: unknown) => e);
    expect((failure as Error).message).toContain(`answered 307, redirecting to "${elsewhere.url}"`);
    expect(elsewhere.hits()).toBe(0);
  });

  it("the near miss: an answer within the limit is read; the CLI takes the limit as --max-response-bytes", async () => {
    const { url } = await serve((res, id) => res.writeHead(200, { "content-type": "application/json" }).end(hello(id, "x".repeat(2000))));
    expect((await new HttpDriver(url, undefined, 4096).call("hello", { protocol_version: PROTOCOL_VERSION })).runtime.name).toBe("x");
    // The server lives in this process: the CLI runs beside it, not blocking it.
    const r = await new Promise<{ code: number | null; out: string }>((done) =>
      execFile(process.execPath, [resolve(ROOT, "dist/bin/pulse-conform.mjs"), "--attach", url, "--max-response-bytes", "100"], { cwd: ROOT }, (error, stdout, stderr) => done({ code: error ? ((error as { code?: number }).code ?? 1) : 0, out: stdout + stderr })),
    );
    expect(r.code).toBe(3);
    expect(r.out).toMatch(/the adapter at http:\S+: its answer (is longer than the 100 bytes|declares \d+ bytes, more than the 100) allowed \(--max-response-bytes\)/);
  });
});
