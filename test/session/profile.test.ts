/** The session loop's profile: the shipped one loads; wrong settings are refused naming the field. */
import { describe, expect, it } from "vitest";
import { loadSessionProfile, parseSessionProfile } from "../../src/coding/session/profile.js";
import { resolveAnchor } from "../../src/coding/session/anchors.js";
import { anchorHint, summarize } from "../../src/coding/session/extract.js";

describe("the session profile", () => {
  it("ships valid, with the seed's defaults", () => {
    const p = loadSessionProfile();
    expect(p.limits.maxIterations).toBe(10);
    expect(p.buildContext.contextStrategy).toBe("prefetch");
    // No turn limits of its own: a preset's timeoutMs / silenceTimeoutMs, else the driver's 15 and 5 minutes, apply.
    expect(p.dispatch.timeoutMs).toBeUndefined();
    expect(p.dispatch.silenceTimeoutMs).toBeUndefined();
    expect(p.extract.allowInference).toBe(true);
  });

  it("refuses an unknown setting, a wrong strategy and a runaway limit; takes the near misses", () => {
    const base = { loop: "coding.pulse_session", phases: {} };
    expect(() => parseSessionProfile({ ...base, phases: { dispatch_agent: { timeout: 5 } } })).toThrow(/\/phases\/dispatch_agent must NOT have additional properties \("timeout" is not a setting of this loop\)/);
    expect(() => parseSessionProfile({ ...base, phases: { build_context: { contextStrategy: "rag" } } })).toThrow(/\/phases\/build_context\/contextStrategy must be equal to one of the allowed values \(one of "none", "prefetch", "mcp", "hybrid"\)/);
    expect(() => parseSessionProfile({ ...base, phases: { deploy: {} } })).toThrow(/"deploy" is not a setting/);
    expect(() => parseSessionProfile({ ...base, limits: { maxIterations: 0 } })).toThrow(/needs allowUnbounded/);
    expect(parseSessionProfile({ ...base, limits: { maxIterations: 0, allowUnbounded: true, maxCostUsd: 5 } }).limits.maxIterations).toBe(0);
    expect(parseSessionProfile({ ...base, phases: { build_context: { contextStrategy: "hybrid" } } }).buildContext.contextStrategy).toBe("hybrid");
  });
});

describe("anchor resolution", () => {
  const turns = [
    { id: "turn-1", iteration: 1, summary: "Built the login form", depth: 0 },
    { id: "turn-2", iteration: 2, summary: "Wrote README", depth: 1 },
  ];
  it("goes chained → explicit → semantic → temporal, recording strategy, salience and depth", () => {
    expect(resolveAnchor({ chained: "turn-2", explicit: "turn-1", goal: "x", turns, minSalience: 0.2 })).toMatchObject({ strategy: "chained", turnId: "turn-2", salience: 1, depth: 2 });
    expect(resolveAnchor({ chained: null, explicit: "outside-uuid", goal: "x", turns, minSalience: 0.2 })).toMatchObject({ strategy: "explicit", turnId: "outside-uuid", salience: 1, depth: 1 });
    expect(resolveAnchor({ goal: "fix the login form validation", turns, minSalience: 0.2 })).toMatchObject({ strategy: "semantic", turnId: "turn-1", salience: 0.5, depth: 1 });
    expect(resolveAnchor({ goal: "deploy to production", turns, minSalience: 0.2 })).toMatchObject({ strategy: "temporal", turnId: "turn-2" });
    expect(resolveAnchor({ goal: "anything", turns: [], minSalience: 0.2 })).toMatchObject({ strategy: "none", turnId: null });
    // The time it took, by the clock it is given; a clock that steps back is never a negative time.
    const ticks = (...t: number[]) => () => t.shift()!;
    expect(resolveAnchor({ goal: "x", turns, minSalience: 0 }, ticks(10, 12.5)).ms).toBe(2.5);
    expect(resolveAnchor({ goal: "x", turns, minSalience: 0 }, ticks(10, 9)).ms).toBe(0);
  });

  it("reads the anchor hint outside code only, and summarises without tags", () => {
    expect(anchorHint("ok <anchor_hint><turn_id>abc</turn_id><reason>api</reason></anchor_hint>")).toEqual({ turnId: "abc", reason: "api" });
    expect(anchorHint("```\n<anchor_hint><turn_id>abc</turn_id></anchor_hint>\n```")).toBeUndefined();
    expect(anchorHint("<anchor_hint>turn-3</anchor_hint>")).toEqual({ turnId: "turn-3" });
    expect(summarize("## Done\nBuilt the login component. Then more.\n<signal>CONTINUE</signal>", "fallback", 160)).toBe("Done Built the login component.");
    expect(summarize("", "feat: x", 160)).toBe("feat: x");
  });
});
