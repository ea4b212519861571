/**
 * The §14 tools in process (the SDK's client over its in-memory transport): two loops with a
 * phase of the same id need `loop` in the grouped style (and are told so), while per-phase names
 * never collide; a phase refused by the runtime is a tool error carrying the error, not a crash.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { createHost } from "../../src/host/index.js";
import { createLoopMcpServer } from "../../src/serve/loop-mcp.js";
import { perPhaseName } from "../../src/serve/loop-tools.js";
import { ROOT } from "../cli/run-bin.js";

const hello = parse(readFileSync(join(ROOT, "manifests/examples/hello.loop.yaml"), "utf8")) as Record<string, unknown>;

async function connected(style: "grouped" | "per-phase", failing = false): Promise<Client> {
  const host = await createHost();
  host.runtime.handleKind("retrieve", (ctx) => {
    if (failing) throw new Error("the index is gone");
    return { query: (ctx.input as { query?: string } | null)?.query ?? "", node_ids: [] };
  });
  await host.load({ ...hello, loop_id: "one.hello", connections: [] });
  await host.load({ ...hello, loop_id: "two.hello", connections: [] });
  const server = createLoopMcpServer(host, style);
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(a);
  const client = new Client({ name: "test", version: "1" });
  await client.connect(b);
  return client;
}

describe("loops as MCP tools, in process", () => {
  it("grouped: a phase id two loops share needs loop, and says so; with it, the call runs in that loop", async () => {
    const client = await connected("grouped");
    const retrieve = (await client.listTools()).tools.find((t) => t.name === "retrieve")!;
    expect((retrieve.inputSchema.properties as Record<string, { enum?: string[] }>).loop!.enum).toEqual(["one.hello", "two.hello"]);
    const ambiguous = await client.callTool({ name: "retrieve", arguments: { action: "fetch", input: { query: "q" } } });
    expect(ambiguous.isError).toBe(true);
    expect((ambiguous.content as { text: string }[])[0]!.text).toBe("2 loops have a retrieve phase fetch (one.hello, two.hello): say which with loop");
    const ok = await client.callTool({ name: "retrieve", arguments: { action: "fetch", loop: "two.hello", input: { query: "q" } } });
    expect(ok.isError).toBeFalsy();
    expect((ok as { structuredContent?: Record<string, unknown> }).structuredContent).toMatchObject({ loop_id: "two.hello", phase_id: "fetch", status: "completed" });
    await client.close();
  });

  it("per-phase: each loop's phase has its own tool; a handler's failure is a tool error with the runtime's error", async () => {
    const client = await connected("per-phase", true);
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining([perPhaseName("one.hello", "fetch"), perPhaseName("two.hello", "fetch")]));
    expect(perPhaseName("one.hello", "fetch")).toBe("pulse_one_hello_fetch");
    const failed = await client.callTool({ name: "pulse_one_hello_fetch", arguments: { input: { query: "q" } } });
    expect(failed.isError).toBe(true);
    const detail = (failed as { structuredContent?: Record<string, any> }).structuredContent!;
    expect(detail).toMatchObject({ status: "failed", loop_id: "one.hello", phase_id: "fetch" });
    expect(detail.error.message).toContain("the index is gone");
    const unknown = await client.callTool({ name: "pulse_three_hello_fetch", arguments: {} });
    expect(unknown.isError).toBe(true);
    await client.close();
  });
});
