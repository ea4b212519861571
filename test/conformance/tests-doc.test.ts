/**
 * docs/conformance/tests.md is what a foreign implementer builds from, so it is held to what the
 * harness really does: each test's configure, manifests (as differences from the standard loop)
 * and scripts are compared with the requests of a real run, and every check description a run
 * can produce appears in it, quoted.
 */
import { describe, expect, it } from "vitest";
import { InProcessDriver } from "../../conformance/driver/in-process-driver.js";
import { PROTOCOL_VERSION } from "../../conformance/driver/protocol.js";
import { RecordingSubstrate } from "../../conformance/harness/observer.js";
import { runTests } from "../../conformance/runner.js";
import { standardLoop } from "../../conformance/suite/manifests.js";
import type { TestResult } from "../../conformance/report/types.js";
import { exampleBlock, readDoc } from "../format/markdown-blocks.js";

const doc = readDoc("conformance/tests.md");

interface Scenario {
  configure: Record<string, unknown>;
  manifests: { loop_id: string; differs: Record<string, unknown>; scripts?: unknown }[];
}

/** The first configure of each test and the manifests loaded after it, as the doc writes them. */
async function observedScenarios(): Promise<{ scenarios: Map<number, Scenario>; results: TestResult[] }> {
  const scenarios = new Map<number, Scenario>();
  let test = 1;
  let current: Scenario | undefined;
  const driver = new InProcessDriver((direction, method, message) => {
    if (direction !== "request") return;
    const params = (message as { params: Record<string, unknown> }).params;
    if (method === "configure") {
      current = scenarios.has(test) ? undefined : { configure: { ...params, substrate_url: "<recording substrate>" }, manifests: [] };
      if (current) scenarios.set(test, current);
    } else if (method === "manifest.load" && current) {
      const manifest = params.manifest as Record<string, unknown>;
      const standard = standardLoop(String(manifest.loop_id));
      const differs: Record<string, unknown> = {};
      for (const key of new Set([...Object.keys(manifest), ...Object.keys(standard)])) {
        if (JSON.stringify(manifest[key]) !== JSON.stringify(standard[key])) differs[key] = manifest[key];
      }
      current.manifests.push({ loop_id: String(manifest.loop_id), differs, ...(params.scripts ? { scripts: params.scripts } : {}) });
    }
  });
  const hello = await driver.call("hello", { protocol_version: PROTOCOL_VERSION });
  const observer = await new RecordingSubstrate().start();
  try {
    const results = await runTests({ driver, observer, hello, timing: "virtual", repeats: 1, seed: 1, repro: () => "", runtimeDigest: "x", onResult: (r) => void (test = r.number + 1) });
    return { scenarios, results };
  } finally {
    await observer.close();
  }
}

describe("docs/conformance/tests.md", () => {
  it("shows the standard loop exactly", () => {
    expect(JSON.parse(exampleBlock(doc, "standard-loop"))).toEqual(standardLoop("conformance.feedback"));
  });

  it("shows, for each test, the configure, manifests and scripts the harness sends, and quotes every check it makes", async () => {
    const { scenarios, results } = await observedScenarios();
    expect(results.map((r) => r.status)).toEqual(Array(12).fill("passed"));
    for (let n = 1; n <= 12; n++) expect(JSON.parse(exampleBlock(doc, `test-${n}`)), `test ${n}`).toEqual(scenarios.get(n));
    // Quoted descriptions may wrap across lines in the Markdown source.
    const flat = doc.replace(/\s+/g, " ");
    const unquoted = [...new Set(results.flatMap((r) => r.checks.map((c) => c.description)))].filter((d) => !flat.includes(`"${d}"`));
    expect(unquoted).toEqual([]);
  }, 60_000);
});
