/**
 * Any agent driver as the agent's LLM: the prompt is the request, the final text the answer. The
 * scripted driver answers this way in tests and in the offline demo (its steps matched on the
 * loop, the role as phase, and the iteration). A driver has no reasoning switch: `think` is
 * recorded `thinkSupported: false`.
 */
import { mkdirSync } from "node:fs";
import type { AgentDriver } from "../../../src/agents/contract.js";
import type { Llm, LlmCall, LlmReply } from "../../../src/coding/agent/llm.js";

export class DriverLlm implements Llm {
  constructor(
    private readonly driver: AgentDriver,
    private readonly cwd: string,
    private readonly loopId: string,
    readonly alias = driver.name,
  ) {}

  async complete(call: LlmCall): Promise<LlmReply> {
    mkdirSync(this.cwd, { recursive: true });
    const prompt = call.system ? `${call.system}\n\n${call.prompt}` : call.prompt;
    const r = await this.driver.run(
      { prompt, cwd: this.cwd, loopId: this.loopId, phaseId: call.role, ...(call.iteration !== undefined ? { iteration: call.iteration } : {}), ...(call.timeoutMs ? { timeoutMs: call.timeoutMs } : {}) },
      call.signal ? { signal: call.signal } : {},
    );
    if (r.status !== "ok") throw new Error(`${this.driver.name} (${call.role}): ${r.status}${r.error ? `: ${r.error.message}` : ""}`);
    return { text: r.text, retries: 0, ...(call.think ? { thinkSupported: false } : {}), ...(r.usage ? { usage: { inputTokens: r.usage.inputTokens, outputTokens: r.usage.outputTokens } } : {}), ...(r.model ? { model: r.model } : {}) };
  }
}
