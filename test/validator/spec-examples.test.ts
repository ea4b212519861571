/**
 * The spec's worked manifests, verbatim (test/fixtures/spec), produce exactly the diagnostics
 * decisions.md predicts; the shipped manifests (manifests/) are consistent and validate clean.
 */
import { describe, expect, it } from "vitest";
import { readSource } from "../../src/source/load.js";
import { validateSources } from "../../src/validator/validate.js";

async function validate(files: string[], strict = false) {
  const sources = await Promise.all(files.map((f) => readSource(f)));
  return validateSources(sources, { strict }).map((r) => ({
    file: r.file,
    valid: r.valid,
    diagnostics: r.diagnostics.map((d) => `${d.line}:${d.column} ${d.severity} ${d.rule}`),
  }));
}

const spec = (name: string) => `test/fixtures/spec/${name}`;

describe("the spec's examples, verbatim", () => {
  it("§4 Graphonomous alone: valid, its inner loop and connection target are external", async () => {
    expect(await validate([spec("graphonomous.jsonc")])).toEqual([
      {
        file: spec("graphonomous.jsonc"),
        valid: true,
        diagnostics: ["81:20 info pulse/inner-loop-external", "114:25 info pulse/connection-external"],
      },
    ]);
  });

  it("§4 pasted into a .json file (comments and all) validates the same", async () => {
    const [r] = await validate([spec("graphonomous-pasted.json")]);
    expect(r!.valid).toBe(true);
    expect(r!.diagnostics).toEqual(["81:20 info pulse/inner-loop-external", "114:25 info pulse/connection-external"]);
  });

  it("§15.2 PRISM: the three §3.2 warnings, errors under --strict", async () => {
    const [r] = await validate([spec("prism.jsonc")]);
    expect(r).toEqual({
      file: spec("prism.jsonc"),
      valid: true,
      diagnostics: [
        "10:3 warning pulse/missing-act",
        "10:3 warning pulse/missing-retrieve",
        "34:19 warning pulse/closure-not-grounded",
        "49:20 info pulse/inner-loop-external",
      ],
    });
    const [strict] = await validate([spec("prism.jsonc")], true);
    expect(strict!.valid).toBe(false);
    expect(strict!.diagnostics.filter((d) => d.includes(" error "))).toHaveLength(3);
  });

  it("§15.3 AgenTroMatic: no retrieve, closure to a custom phase", async () => {
    expect((await validate([spec("agentromatic.jsonc")]))[0]!.diagnostics).toEqual([
      "10:3 warning pulse/missing-retrieve",
      "33:19 warning pulse/closure-not-grounded",
      "73:25 info pulse/connection-external",
    ]);
  });

  it("§4 and §15.2 together: the connection to observe_judgments and the parent_loop disagreement", async () => {
    const results = await validate([spec("graphonomous.jsonc"), spec("prism.jsonc")]);
    expect(results[0]).toEqual({
      file: spec("graphonomous.jsonc"),
      valid: false,
      diagnostics: ["81:20 info pulse/inner-loop-external", "115:25 error pulse/connection-unresolved"],
    });
    expect(results[1]!.diagnostics).toEqual([
      "10:3 warning pulse/missing-act",
      "10:3 warning pulse/missing-retrieve",
      "34:19 warning pulse/closure-not-grounded",
      "49:20 warning pulse/nesting-disagreement",
    ]);
  });
});

describe("the shipped manifests", () => {
  it("validate together with only the expected warnings and infos", async () => {
    const files = [
      "manifests/graphonomous.continual_learning.yaml",
      "manifests/graphonomous.deliberate.yaml",
      "manifests/prism.benchmark.yaml",
      "manifests/agentromatic.deliberation.yaml",
      "manifests/examples/hello.loop.yaml",
      "manifests/examples/listener.loop.yaml",
      "manifests/examples/idle-consolidation.loop.yaml",
    ];
    const results = await validate(files);
    expect(results.every((r) => r.valid)).toBe(true);
    const byFile = Object.fromEntries(results.map((r) => [r.file, r.diagnostics.map((d) => d.split(" ").slice(1).join(" "))]));
    expect(byFile).toEqual({
      "manifests/graphonomous.continual_learning.yaml": [],
      "manifests/graphonomous.deliberate.yaml": [],
      "manifests/prism.benchmark.yaml": ["warning pulse/missing-act", "warning pulse/missing-retrieve", "warning pulse/closure-not-grounded"],
      "manifests/agentromatic.deliberation.yaml": ["warning pulse/missing-retrieve", "warning pulse/closure-not-grounded", "info pulse/connection-external"],
      "manifests/examples/hello.loop.yaml": [],
      "manifests/examples/listener.loop.yaml": [],
      "manifests/examples/idle-consolidation.loop.yaml": [],
    });
  });
});
