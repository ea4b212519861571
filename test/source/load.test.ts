import { describe, expect, it } from "vitest";
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseSourceBytes, readSource, SourceReadError, sniffFormat } from "../../src/source/load.js";
import { itWhen } from "../helpers/requires.js";

const bytes = (s: string) => new TextEncoder().encode(s);
const rules = async (name: string, b: Uint8Array, maxBytes?: number) =>
  (await parseSourceBytes(name, b, maxBytes ? { maxBytes } : {})).problems.map((p) => p.rule);

describe("loading hostile input", () => {
  it("refuses empty and whitespace-only files, accepts a minimal document", async () => {
    expect(await rules("a.yaml", bytes(""))).toEqual(["input/empty"]);
    expect(await rules("a.json", bytes("  \n\t\n"))).toEqual(["input/empty"]);
    expect(await rules("a.yaml", bytes("# only a comment\n"))).toEqual(["input/empty"]);
    expect(await rules("a.json", bytes("// only a comment\n"))).toEqual(["input/empty"]);
    expect(await rules("a.yaml", bytes("a: 1\n"))).toEqual([]);
  });

  it("refuses binary and non-UTF-8 content", async () => {
    expect(await rules("a.yaml", new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0x0d]))).toEqual(["input/binary"]);
    expect(await rules("a.yaml", new Uint8Array([0x61, 0x3a, 0x20, 0xff, 0xfe, 0x0a]))).toEqual(["input/encoding"]);
    expect(await rules("a.json", new Uint8Array([0xff, 0xfe, 0x7b, 0x00]))).toEqual(["input/encoding"]);
  });

  it("accepts a UTF-8 BOM and non-ASCII text", async () => {
    const s = await parseSourceBytes("a.json", bytes('\uFEFF{"description": "κ-routing — ✓"}'));
    expect(s.problems).toEqual([]);
    expect(s.value).toEqual({ description: "κ-routing — ✓" });
  });

  it("refuses files over the size limit before reading them", async () => {
    const dir = mkdtempSync(join(tmpdir(), "pulse-load-"));
    const big = join(dir, "big.yaml");
    writeFileSync(big, "a: " + "x".repeat(2048) + "\n");
    const refused = await readSource(big, { maxBytes: 1024 });
    expect(refused.problems.map((p) => p.rule)).toEqual(["input/too-large"]);
    expect(refused.problems[0]!.message).toMatch(/limited to 1 KiB/);
    expect((await readSource(big, { maxBytes: 4096 })).problems).toEqual([]);
  });

  it("states a limit under 1 KiB in bytes, not rounded up to 1 KiB", async () => {
    const dir = mkdtempSync(join(tmpdir(), "pulse-load-"));
    const file = join(dir, "m.yaml");
    writeFileSync(file, "a: " + "x".repeat(3000) + "\n");
    expect((await readSource(file, { maxBytes: 10 })).problems[0]!.message).toMatch(/^the file is 3 KiB; manifests are limited to 10 bytes /);
    expect((await readSource(file, { maxBytes: 2 * 1024 * 1024 })).problems).toEqual([]);
    expect((await readSource(file, { maxBytes: 2048 })).problems[0]!.message).toMatch(/limited to 2 KiB/);
  });

  itWhen(existsSync("/dev/zero"), "a /dev/zero device", "skip")("refuses an endless device instead of reading it forever", async () => {
    const refused = await readSource("/dev/zero", { maxBytes: 100 });
    expect(refused.problems.map((p) => p.rule)).toEqual(["input/too-large"]);
    expect(refused.problems[0]!.message).toMatch(/over the limit; manifests are limited to 100 bytes/);
  });

  itWhen(process.platform !== "win32", "POSIX named pipes", "skip")("reads a pipe only up to the limit, and accepts a small manifest through one", async () => {
    const dir = mkdtempSync(join(tmpdir(), "pulse-fifo-"));
    const fifo = join(dir, "loop.yaml");
    execFileSync("mkfifo", [fifo]);
    // A writer that never stops on its own: only the reader going away (EPIPE) ends it.
    const script = `const fs = require("fs"); const fd = fs.openSync(process.argv[1], "w"); const b = Buffer.from("a: 1\\n".repeat(1000)); try { for (;;) fs.writeSync(fd, b); } catch {}`;
    const writer = spawn(process.execPath, ["-e", script, fifo], { stdio: "ignore" });
    const exited = new Promise((done) => writer.on("exit", done));
    const refused = await readSource(fifo, { maxBytes: 64 * 1024 });
    expect(refused.problems.map((p) => p.rule)).toEqual(["input/too-large"]);
    await exited;

    const [accepted] = await Promise.all([readSource(fifo, { maxBytes: 64 * 1024 }), writeFile(fifo, "loop_id: a.one\nphases: []\n")]);
    expect(accepted.problems).toEqual([]);
    expect(accepted.value).toEqual({ loop_id: "a.one", phases: [] });
  });

  itWhen(process.platform !== "win32", "POSIX named pipes", "skip")("gives up on a named pipe that no program writes to, saying so, instead of blocking forever", async () => {
    const dir = mkdtempSync(join(tmpdir(), "pulse-fifo-"));
    const fifo = join(dir, "loop.yaml");
    execFileSync("mkfifo", [fifo]);
    const started = Date.now();
    const refused = readSource(fifo, { pipeTimeoutMs: 300 });
    await expect(refused).rejects.toBeInstanceOf(SourceReadError);
    await expect(refused).rejects.toThrow(`${fifo} is a named pipe and no program opened it for writing for 0.3 s: start the writer first`);
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    // The near miss: a writer that comes late, but within the time, is read.
    const late = readSource(fifo, { pipeTimeoutMs: 5000 });
    await new Promise((r) => setTimeout(r, 150));
    await writeFile(fifo, "loop_id: a.one\n");
    expect((await late).value).toEqual({ loop_id: "a.one" });
  });

  it("throws SourceReadError for missing files and directories", async () => {
    await expect(readSource("/nonexistent/x.yaml")).rejects.toBeInstanceOf(SourceReadError);
    await expect(readSource(tmpdir())).rejects.toThrow(/is a directory/);
  });

  it("detects the format from the extension, else from the content", async () => {
    expect(sniffFormat('  // c\n{"a": 1}')).toBe("json");
    expect(sniffFormat("a: 1")).toBe("yaml");
    expect((await parseSourceBytes("x.txt", bytes('{"a": 1}'))).format).toBe("json");
    expect((await parseSourceBytes("x", bytes("a: [1]"))).format).toBe("yaml");
    // A YAML file that starts with a flow mapping is still YAML when its extension says so.
    expect((await parseSourceBytes("x.yaml", bytes("{a: 1}"))).value).toEqual({ a: 1 });
  });
});
