/**
 * The session's completion tool is real: the HTTP driver offers `pulse_signal` natively, and a
 * turn that ends with it is read as the signal (source tool_call), ahead of a tag in its words.
 */
import { afterAll, describe, expect, it } from "vitest";
import { HttpDriver } from "../../adapters/agents/http/http-driver.js";
import { MemorySessionRecords } from "../../adapters/memory/session-records.js";
import { createRuntime } from "../../src/embedded.js";
import { loadSessionProfile } from "../../src/coding/session/profile.js";
import { SessionRunner } from "../../src/coding/session/runner.js";
import { startChatMock } from "../agents/support/chat-mock.js";
import { gitRepo, newSession, removeDir } from "./helpers.js";

const repos: string[] = [];
afterAll(() => repos.forEach(removeDir));

describe("pulse_signal, the session's completion tool", () => {
  it("is offered to the HTTP driver's model, and its call is the iteration's signal", async () => {
    const repo = gitRepo();
    repos.push(repo);
    // The words say CONTINUE; the tool call says COMPLETE, and the tool call counts.
    const mock = await startChatMock([{ content: "Done. <signal>CONTINUE</signal>", toolCalls: [{ name: "pulse_signal", arguments: { signal: "COMPLETE" } }] }, { content: "finished" }]);
    try {
      const records = new MemorySessionRecords();
      const driver = new HttpDriver({ baseUrl: mock.url, model: "mock-llm" });
      const runner = await SessionRunner.create({ runtime: await createRuntime(), records, profile: loadSessionProfile(), driverFor: () => driver });
      const id = await newSession(records, repo, { max_iterations: 2 });
      const final = await runner.run(id);
      expect(final.status).toBe("complete");
      const [it1] = await records.iterations(id);
      expect(it1).toMatchObject({ signal: "COMPLETE", signal_source: "tool_call" });
      const tools = (mock.bodies[0]!.tools as { function: { name: string; parameters: { required: string[] } } }[]).map((t) => t.function);
      expect(tools.find((t) => t.name === "pulse_signal")?.parameters.required).toEqual(["signal"]);
    } finally {
      await mock.close();
    }
  });
});
