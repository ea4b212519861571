/** A suite that needs a server it cannot reach: skipped with the reason, but failed under CI=true. */
import { spawnSync } from "node:child_process";
import { resolve } from "node:path";
import { expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");

function vitest(env: Record<string, string>) {
  const r = spawnSync(process.execPath, [resolve(ROOT, "node_modules/vitest/vitest.mjs"), "run", "--reporter=verbose", "test/adapters/nats/contract.test.ts"], {
    cwd: ROOT,
    encoding: "utf8",
    env: { PATH: process.env.PATH ?? "", NATS_URL: "nats://127.0.0.1:1", ...env },
  });
  return { code: r.status, out: r.stdout + r.stderr };
}

it("a missing NATS server fails the suite under CI=true, and only skips it (saying why) otherwise", () => {
  const ci = vitest({ CI: "true" });
  expect(ci.code).not.toBe(0);
  expect(ci.out).toMatch(/no NATS server at nats:\/\/127\.0\.0\.1:1 .*CI=true: a suite that needs a server fails without it/);
  const local = vitest({ CI: "false" });
  expect(local.code).toBe(0);
  expect(local.out).toMatch(/skipped: no NATS server at nats:\/\/127\.0\.0\.1:1/);
}, 120_000);
