/** pulse-validate given a named pipe that nobody writes to ends with a message, not a hang. */
import { execFileSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runBin } from "./run-bin.js";
import { describeWhen } from "../helpers/requires.js";

describeWhen(process.platform !== "win32", "POSIX named pipes", "skip")("pulse-validate and a named pipe", () => {
  it("without a writer: exit 2 after 10 s, saying what to do", () => {
    const dir = mkdtempSync(join(tmpdir(), "pulse-fifo-"));
    const fifo = join(dir, "loop.yaml");
    execFileSync("mkfifo", [fifo]);
    const r = runBin("pulse-validate", [fifo]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`pulse-validate: ${fifo} is a named pipe and no program opened it for writing for 10 s: start the writer first (e.g. cat loop.yaml > ${fifo} &), or pass the manifest itself\n`);
  }, 60_000);

  it("with a writer: validated like a file", () => {
    const dir = mkdtempSync(join(tmpdir(), "pulse-fifo-"));
    const fifo = join(dir, "loop.yaml");
    execFileSync("mkfifo", [fifo]);
    const out = execFileSync("sh", ["-c", `cat manifests/examples/listener.loop.yaml > '${fifo}' & node dist/bin/pulse-validate.mjs --format compact '${fifo}'; echo "exit $?"`], { encoding: "utf8" });
    expect(out).toMatch(/exit 0\n$/);
  }, 60_000);
});
