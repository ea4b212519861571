import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ToolCall } from "../../src/agents/contract.js";
import { resolveSignal, stripCode } from "../../src/coding/signals.js";

interface Fixture {
  name: string;
  text: string;
  inference?: boolean;
  toolCalls?: ToolCall[];
  expect: { signal: string; source: string; reason?: string; warning?: string };
}

const fixtures = JSON.parse(readFileSync(new URL("./fixtures/signals.json", import.meta.url), "utf8")) as Fixture[];

describe("signal resolver: seed 000 examples and peers' false positives", () => {
  for (const f of fixtures) {
    it(f.name, () => {
      const r = resolveSignal({ text: f.text, allowInference: f.inference === true, ...(f.toolCalls ? { toolCalls: f.toolCalls } : {}) });
      expect(r.signal).toBe(f.expect.signal);
      expect(r.source).toBe(f.expect.source);
      if (f.expect.reason) expect(r.reason).toBe(f.expect.reason);
      if (f.expect.warning) expect(r.warnings.join(" ")).toContain(f.expect.warning);
      if (r.source !== "default") expect(r.evidence).not.toBe("");
    });
  }
});

describe("signal resolver: properties", () => {
  const word = fc.constantFrom("CONTINUE", "COMPLETE", "BLOCKED");
  const noise = fc.string({ maxLength: 40 }).map((s) => s.replace(/[`<>~\-]/g, ""));

  it("a tag outside code is always found, whatever prose surrounds it", () => {
    fc.assert(
      fc.property(noise, word, noise, (before, w, after) => {
        const r = resolveSignal({ text: `${before}\n<signal>${w}</signal>\n${after}` });
        expect(r).toMatchObject({ signal: w, source: "tag" });
      }),
    );
  });

  it("nothing inside a fenced block ever decides the signal", () => {
    fc.assert(
      fc.property(noise, word, (inside, w) => {
        const r = resolveSignal({ text: `\`\`\`\n${inside}\n<signal>${w}</signal>\nall tasks are complete\n\`\`\``, allowInference: true });
        expect(r.source === "tag" || r.source === "status_block").toBe(false);
        expect(r.signal === "COMPLETE").toBe(false);
      }),
    );
  });

  it("stripCode keeps prose and drops fences and inline code", () => {
    expect(stripCode("a `x` b\n```\nc\n```\nd")).toBe("a  b\nd");
  });
});

describe("an inferred BLOCKED's reason", () => {
  it("is the agent's own sentence, for the person the notification reaches", () => {
    const r = resolveSignal({ text: "I updated the parser.\nThe deploy key is missing, so I cannot proceed without it. Tests pass.", allowInference: true });
    expect(r).toMatchObject({ signal: "BLOCKED", source: "inferred", evidence: "cannot proceed", reason: "The deploy key is missing, so I cannot proceed without it." });
    // Near miss: a tag's reason is the agent's words as given.
    expect(resolveSignal({ text: "<signal>BLOCKED: need the API key</signal>" }).reason).toBe("need the API key");
  });
});
