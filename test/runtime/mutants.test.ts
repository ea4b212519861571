// The conformance self-test's mutants are switched on through an internal entry
// (src/runtime/mutants.ts), never through the public RuntimeOptions or HostOptions.
import { describe, expect, it } from "vitest";
import { createHost } from "../../src/host/index.js";
import { createRuntime, VirtualClock, type RuntimeOptions } from "../../src/index.js";
import { withMutant } from "../../src/runtime/mutants.js";
import { manifestWith, validHandlers } from "./harness.js";

const idempotentFetch = manifestWith((m) => (m.phases[0].idempotent = true));

async function fetchRuns(options: RuntimeOptions): Promise<number> {
  let runs = 0;
  const runtime = await createRuntime({ clock: new VirtualClock(0), ...options });
  for (const [k, h] of Object.entries(validHandlers())) runtime.handleKind(k, h);
  runtime.handle("fetch", () => (runs++, { same: true }));
  const loop = await runtime.load(idempotentFetch);
  await loop.invokePhase("fetch", { input: { q: 1 } });
  await loop.invokePhase("fetch", { input: { q: 1 } });
  return runs;
}

describe("conformance mutants", () => {
  it("are not part of the public options: `mutant` is no RuntimeOptions or HostOptions field, and a JS caller setting it changes nothing", async () => {
    // @ts-expect-error RuntimeOptions has no mutant field
    const publicOptions: RuntimeOptions = { mutant: "re-executes" };
    expect(await fetchRuns(publicOptions)).toBe(1);
    // @ts-expect-error HostOptions has no mutant field either
    const host = await createHost({ mutant: "drops-signal" });
    await host.stop();
  });

  it("are switched on by the internal entry the conformance harness uses", async () => {
    expect(await fetchRuns(withMutant({}, "re-executes"))).toBe(2);
    expect(await fetchRuns(withMutant({}, undefined))).toBe(1);
  });

  it("are not exported by any package entry", async () => {
    for (const entry of ["../../src/index.js", "../../src/host/index.js", "../../adapters/index.js"]) {
      const m = (await import(entry)) as Record<string, unknown>;
      expect(Object.keys(m).filter((k) => /mutant/i.test(k)), entry).toEqual([]);
    }
  });
});
