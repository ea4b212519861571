/**
 * Where a command writes: `-o` files (replaced atomically, but never a device, a pipe or the
 * symlink itself), and a standard output that cannot take the report.
 */
import { describe, expect, it } from "vitest";
import { execFile, spawnSync } from "node:child_process";
import { chmodSync, closeSync, lstatSync, mkdtempSync, openSync, readFileSync, readdirSync, readlinkSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { ROOT, runBin } from "./run-bin.js";
import { itWhen } from "../helpers/requires.js";

const HAS_MKFIFO = spawnSync("sh", ["-c", "command -v mkfifo"]).status === 0;
const HAS_DEV_FULL = statSync("/dev/full", { throwIfNoEntry: false })?.isCharacterDevice() === true;

const tmp = () => mkdtempSync(join(tmpdir(), "pulse-out-"));
const PRISM = "manifests/prism.benchmark.yaml";
const bin = (name: string) => resolve(ROOT, "dist/bin", `${name}.mjs`);

describe("-o writes through what is already at the path", () => {
  it("follows a symlink: the file it names gets the report, the link stays a link", () => {
    const dir = tmp();
    writeFileSync(join(dir, "real.json"), "old");
    symlinkSync("real.json", join(dir, "link.json"));
    const r = runBin("pulse-validate", ["-o", join(dir, "link.json"), PRISM]);
    expect(r.code).toBe(0);
    expect(lstatSync(join(dir, "link.json")).isSymbolicLink()).toBe(true);
    expect(readlinkSync(join(dir, "link.json"))).toBe("real.json");
    expect(JSON.parse(readFileSync(join(dir, "real.json"), "utf8")).version).toBe(1);
    expect(readdirSync(dir).sort()).toEqual(["link.json", "real.json"]);
  });

  it("keeps the mode of a file it replaces; a new file gets the default", () => {
    const dir = tmp();
    writeFileSync(join(dir, "kept.json"), "old");
    chmodSync(join(dir, "kept.json"), 0o640);
    runBin("pulse-validate", ["-o", join(dir, "kept.json"), PRISM]);
    expect(statSync(join(dir, "kept.json")).mode & 0o777).toBe(0o640);
    expect(readFileSync(join(dir, "kept.json"), "utf8")).toMatch(/"files"/);
  });

  itWhen(HAS_MKFIFO, "the mkfifo command")("writes into a named pipe instead of replacing it", async () => {
    const dir = tmp();
    const fifo = join(dir, "report.fifo.json");
    expect(spawnSync("mkfifo", [fifo]).status).toBe(0);
    const reading = readFile(fifo, "utf8");
    await promisify(execFile)(process.execPath, [bin("pulse-validate"), "-o", fifo, PRISM], { cwd: ROOT });
    expect(JSON.parse(await reading).version).toBe(1);
    expect(statSync(fifo).isFIFO()).toBe(true);
  });

  it("writes to /dev/null and leaves the device a device", () => {
    const ok = runBin("pulse-validate", ["-o", "/dev/null", PRISM]);
    expect(ok.code).toBe(0);
    expect(statSync("/dev/null").isCharacterDevice()).toBe(true);
  });

  itWhen(HAS_DEV_FULL, "a /dev/full device")("a full device is a one-line refusal", () => {
    const full = runBin("pulse-diagram", ["manifests/", "-f", "svg", "-o", "/dev/full"]);
    expect(full.code).toBe(2);
    expect(full.stderr).toBe("pulse-diagram: cannot write /dev/full: no space left on the device\n");
    expect(statSync("/dev/full").isCharacterDevice()).toBe(true);
  });
});

describe("a standard output that cannot take the report", () => {
  itWhen(HAS_DEV_FULL, "a /dev/full device")("is one line on stderr and the usage exit code, never a stack trace", () => {
    const fd = openSync("/dev/full", "w");
    try {
      for (const [name, args, code] of [
        ["pulse-diagram", ["manifests/", "-f", "json"], 2],
        ["pulse-validate", ["-f", "json", "manifests/"], 2],
      ] as const) {
        const r = spawnSync(process.execPath, [bin(name), ...args], { cwd: ROOT, stdio: ["ignore", fd, "pipe"], encoding: "utf8" });
        expect(r.stderr, name).toBe(`${name}: cannot write to standard output: no space left on the device\n`);
        expect(r.status, name).toBe(code);
      }
    } finally {
      closeSync(fd);
    }
  });
});

describe("standard input over the size limit", () => {
  it("is refused once the limit is passed, even when the input never ends", () => {
    // `yes` never stops: reading it all before checking the size would run until killed.
    const r = spawnSync("sh", ["-c", `yes aaaaaaaa | "${process.execPath}" "${bin("pulse-validate")}" --max-file-size 1024 -`], { cwd: ROOT, encoding: "utf8", timeout: 30_000 });
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(/input\/too-large/);
  });
});
