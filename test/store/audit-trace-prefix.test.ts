/**
 * `pulse audit --trace` takes what the live trace of `pulse run` prints: the first 8 hex digits
 * of an iteration's trace id name it when no other trace id starts with them; a prefix several
 * start with is refused (how many, and give more of it); what is no trace id at all is refused.
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, expect, it } from "vitest";
import { openStore } from "../../adapters/store.js";
import { initSignatures } from "../../src/runtime/signature.js";
import { runBin } from "../cli/run-bin.js";
import { event, tempDir } from "./stores.js";

beforeAll(() => initSignatures());

const A = "4bf92f3577b34da6a3ce929d0e0e4736";
const B = "4bf92f35aaaaaaaaaaaaaaaaaaaaaaaa";
const C = "9c0ffee0bbbbbbbbbbbbbbbbbbbbbbbb";

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

/** A SQLite store whose trail holds two events of each trace. */
async function storeWith(traces: string[]): Promise<string[]> {
  dir = tempDir();
  const path = join(dir, "pulse.db");
  const store = await openStore(`sqlite:${path}`);
  for (const t of traces) {
    const audit = [0, 1].map((seq) => event(seq, { event_id: `${t}-${seq}`, trace_id: t }));
    await store.commit({ loop_id: "examples.hello", workspace_id: "ws_a", trace_id: t, started: { number: 1, entry: "decide", input: null, started_at: "2026-11-24T12:00:00.000Z" }, audit });
  }
  await store.close();
  return ["--store", `sqlite:${path}`];
}

const traceIds = (stdout: string) => stdout.trim().split("\n").map((l) => (JSON.parse(l) as { trace_id: string }).trace_id);

it("the 8 hex digits pulse run prints name the iteration (a full id too); a prefix two trace ids share is refused with how many", async () => {
  const store = await storeWith([A, B, C]);
  const short = runBin("pulse", ["audit", ...store, "--trace", C.slice(0, 8), "--json"]);
  expect(short.stderr).toBe("");
  expect(short.code).toBe(0);
  expect(traceIds(short.stdout)).toEqual([C, C]);
  expect(traceIds(runBin("pulse", ["audit", ...store, "--trace", A, "--json"]).stdout)).toEqual([A, A]);
  // Two trace ids start with 4bf92f35: refused; one more digit tells them apart.
  const shared = runBin("pulse", ["audit", ...store, "--trace", "4bf92f35"]);
  expect(shared.code).toBe(2);
  expect(shared.stderr).toBe(`pulse: --trace 4bf92f35: 2 trace ids start with it (${A}, ${B}): give more of it\n`);
  expect(traceIds(runBin("pulse", ["audit", ...store, "--trace", "4bf92f357", "--json"]).stdout)).toEqual([A, A]);
  // A prefix no trace id starts with finds no event, and says so.
  expect(runBin("pulse", ["audit", ...store, "--trace", "deadbeef"]).stdout).toMatch(/^no audit events in sqlite /);
});

it("what is no trace id, nor 4 hex digits of one, is refused in one line, exit 2", async () => {
  const store = await storeWith([A]);
  for (const bad of ["xyz", "4bf", `${A}0`]) {
    const r = runBin("pulse", ["audit", ...store, "--trace", bad]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`pulse: --trace takes a trace id (32 hex digits) or its first 4 or more, as pulse run prints 8, not ${JSON.stringify(bad)}\n`);
  }
  expect(runBin("pulse", ["audit", ...store, "--trace", "4bf9"]).code).toBe(0);
});
