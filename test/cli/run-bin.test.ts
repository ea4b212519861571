/** The helper every bin test goes through: a bin that hangs fails its test with its output. */
import { describe, expect, it } from "vitest";
import { runBin } from "./run-bin.js";

describe("runBin", () => {
  it("kills a bin that outlives its bound and fails with what the bin printed", () => {
    const started = performance.now();
    // --duration keeps the loops running for a minute: far past the 6 s bound, which leaves a
    // loaded machine time to start the bin and print its first iteration.
    expect(() => runBin("pulse", ["run", "manifests/examples/hello.loop.yaml", "--duration", "60s", "--no-color"], { timeoutMs: 6_000 })).toThrow(
      /pulse run manifests\/examples\/hello\.loop\.yaml --duration 60s --no-color did not finish within 6000 ms and was killed\n--- its stdout ---\n[^]*examples\.hello/,
    );
    expect(performance.now() - started).toBeLessThan(30_000);
  });

  it("a bin that finishes within its bound returns its exit code and output", () => {
    const r = runBin("pulse", ["run", "manifests/examples/hello.loop.yaml", "--once", "--no-color"], { timeoutMs: 60_000 });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("examples.hello");
  });
});
