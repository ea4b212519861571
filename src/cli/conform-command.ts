/**
 * `pulse-conform`: certify a runtime against the twelve tests of spec §12. With no driver it
 * certifies our own runtime in process; `--driver "<command>"` (or the command after `--`) runs
 * any adapter over stdio, `--attach <url>` one already running. Exit codes: 0 conformant,
 * 1 nonconformant, 2 incomplete, 3 driver failure, 4 usage, 5 verification failed.
 */
import { access, readFile, stat } from "node:fs/promises";
import { constants, existsSync, readFileSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { DriverFailure, type Driver, type MessageCheck } from "../../conformance/driver/driver.js";
import { PROTOCOL_VERSION, type HelloResult } from "../../conformance/driver/protocol.js";
import { DriverObserver, RecordingSubstrate, type Observer } from "../../conformance/harness/observer.js";
import { buildReport, runTests, sha256 } from "../../conformance/runner.js";
import { CONFORM_EXIT, closingLine, exitCodeOf, resultsLine } from "../../conformance/report/summary.js";
import { ARTIFACT_DIGEST_SOURCES, type ConformanceReport, type RuntimeDigestSource, type TestResult } from "../../conformance/report/types.js";
import { shellJoin, shellQuote } from "../../conformance/driver/shell.js";
import type { ConformanceTest } from "../../conformance/suite/test.js";
import { checkLines } from "../../conformance/report/junit.js";
import { parseCount, readManifestSources, writeAtomically } from "./inputs.js";
import { UsageError } from "./exit-codes.js";
import { useColor, type CliIO } from "./io.js";
import { DEFAULT_MAX_BYTES } from "../source/load.js";
import { validateSources } from "../validator/validate.js";

export interface ConformCliOptions {
  driver?: string;
  /** The adapter's command as words, from the operands after `--`. */
  adapter?: string[];
  runtimeDigest?: string;
  attach?: string;
  maxResponseBytes?: string;
  report?: string;
  attest?: string;
  key?: string;
  junit?: string;
  markdown?: string;
  badge?: string;
  repeat?: string;
  seed?: string;
  only?: string;
  timing?: string;
  evidence?: string;
  manifest?: string[];
  validateProtocol?: boolean;
  color?: boolean;
}

export const CONFORM_HELP = `
Examples:
  pulse-conform                                   certify pulse's own runtime (in process)
  pulse-conform --driver "python3 my_adapter.py"  certify any runtime through an adapter (stdio)
  pulse-conform -- python3 my_adapter.py          the same: the adapter's command after --
  pulse-conform --attach http://127.0.0.1:7400    an adapter that is already running (HTTP)
  pulse-conform --report report.json --attest report.dsse.json --key pulse-conform.key
  pulse-conform --manifest manifests/             also certify that these manifests load (test 12)
  pulse-conform --loop loop.yaml --handlers h.js  certify a loop: the tests that apply to it, on pulse's runtime
  pulse-conform selftest                          prove the suite can fail: 12 mutants, 12 caught
  pulse-conform keygen --out keys/                an Ed25519 key pair for attestations
  pulse-conform verify report.dsse.json --report report.json --key pulse-conform.pub

The driver protocol: docs/conformance/driver-protocol.md. What each test does: docs/conformance/tests.md.
Certifying a loop: docs/conformance/loops.md. The report: docs/conformance/report.md.

Exit codes: 0 conformant, 1 nonconformant, 2 incomplete (a test errored, was not exercised or
was flaky), 3 driver failure (the adapter crashed, hung or broke the protocol), 4 usage error,
5 verification failed (verify).`;

interface Session {
  driver: Driver;
  observer: Observer;
  hello: HelloResult;
  timing: "virtual" | "real";
  runtimeDigest: string;
  runtimeDigestSource: RuntimeDigestSource;
  problems: string[];
}

/**
 * The stdio adapter's command: --driver's string as given (the shell splits it), or the words
 * after `--`, each quoted so that it stays one word.
 */
export function driverCommandOf(opts: ConformCliOptions): string | undefined {
  if (opts.adapter !== undefined) {
    if (opts.adapter.length === 0) throw new UsageError("-- must be followed by the adapter's command, e.g. pulse-conform -- ./acme-adapter");
    if (opts.driver !== undefined) throw new UsageError("--driver and a command after -- both name the adapter: give one of them");
    if (opts.attach !== undefined) throw new UsageError("--attach and a command after -- cannot be combined: pick the adapter to run or the one to attach to");
    return shellJoin(opts.adapter);
  }
  return opts.driver;
}

const SHA256 = /^sha256:[0-9a-f]{64}$/;

/** --runtime-digest as "sha256:<lowercase hex>"; a malformed one is a usage error. */
export function parseRuntimeDigest(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const digest = value.trim().replace(/^sha256:/i, "sha256:").replace(/[A-F]/g, (c) => c.toLowerCase());
  if (!SHA256.test(digest)) throw new UsageError(`--runtime-digest takes "sha256:" and 64 hex digits, got "${value}"`);
  return digest;
}

/** Opens the driver named by the options, greets it, and sets up the observer. */
export async function openSession(opts: ConformCliOptions, io: CliIO): Promise<Session> {
  if (opts.driver !== undefined && opts.attach !== undefined) throw new UsageError("--driver and --attach cannot be combined: pick the adapter to run or the one to attach to");
  const command = driverCommandOf(opts);
  let problems: string[] = [];
  let check: MessageCheck | undefined;
  if (opts.validateProtocol) {
    const { protocolChecker } = await import("../../conformance/driver/protocol-check.js");
    const checker = protocolChecker();
    check = checker.check;
    problems = checker.problems;
  }
  let driver: Driver;
  if (command !== undefined) {
    const { StdioDriver } = await import("../../conformance/driver/stdio-driver.js");
    driver = new StdioDriver(command, check);
  } else if (opts.attach !== undefined) {
    if (!/^https?:\/\//.test(opts.attach)) throw new UsageError(`--attach needs an http:// or https:// URL, got "${opts.attach}"`);
    const { HttpDriver } = await import("../../conformance/driver/http-driver.js");
    const maxResponseBytes = parseCount("--max-response-bytes", opts.maxResponseBytes);
    driver = new HttpDriver(opts.attach, check, maxResponseBytes);
  } else {
    const { InProcessDriver } = await import("../../conformance/driver/in-process-driver.js");
    driver = new InProcessDriver(check);
  }
  try {
    const hello = await driver.call("hello", { protocol_version: PROTOCOL_VERSION });
    if (hello?.protocol_version !== PROTOCOL_VERSION) throw new DriverFailure(`hello: protocol_version must be the string "${PROTOCOL_VERSION}" (this harness's driver protocol), the adapter answered ${JSON.stringify(hello?.protocol_version)}`);
    const timing = opts.timing === "real" || hello.capabilities?.clock !== "virtual" ? "real" : "virtual";
    const offered = hello.capabilities?.substrates ?? [];
    const wantDriverEvidence = opts.evidence === "driver" || !offered.includes("rebind");
    if (wantDriverEvidence && !offered.includes("fault-injection")) {
      // Asking for what the adapter does not offer is a mistake in the command; offering
      // neither way to observe substrates is the adapter's.
      if (opts.evidence === "driver") {
        throw new UsageError(
          `--evidence driver needs the adapter's "fault-injection" capability, and hello.capabilities.substrates offers ${offered.length === 0 ? "nothing" : offered.map((c) => `"${c}"`).join(", ")}: leave out --evidence driver to observe through the recording substrate`,
        );
      }
      throw new DriverFailure(`the adapter offers neither "rebind" nor "fault-injection" in hello.capabilities.substrates (it offers ${offered.length === 0 ? "nothing" : offered.map((c) => `"${c}"`).join(", ")}): the harness has no way to observe substrate calls`);
    }
    const { digest, source } = runtimeDigestOf(opts, hello);
    const observer: Observer = wantDriverEvidence ? new DriverObserver(driver) : await new RecordingSubstrate().start();
    return { driver, observer, hello, timing, runtimeDigest: digest, runtimeDigestSource: source, problems };
  } catch (e) {
    // Read before closing: when the adapter dies while starting, its stderr is the explanation.
    const tail = driver.stderrTail();
    await driver.close().catch(() => undefined);
    if (e instanceof UsageError) throw e;
    const failure = e instanceof DriverFailure ? e : new DriverFailure(`hello failed: ${(e as Error).message}`);
    failure.stderrTail ??= tail;
    throw failure;
  }
}

/**
 * The runtime artifact's digest: the certifier's --runtime-digest, else the adapter's own
 * (hello.runtime.digest). Without either the harness hashes what it has at hand, and the report
 * says so in runtime_digest_source: such a digest does not identify the runtime.
 */
function runtimeDigestOf(opts: ConformCliOptions, hello: HelloResult): { digest: string; source: RuntimeDigestSource } {
  const reported = typeof hello.runtime.digest === "string" && SHA256.test(hello.runtime.digest) ? hello.runtime.digest : undefined;
  const given = parseRuntimeDigest(opts.runtimeDigest);
  // The certifier's word wins: it may name the artifact otherwise than the adapter does (the
  // sha256 of a release tarball, say), and it is the certifier who signs. A different digest
  // from the adapter is shown in the header line, not hidden.
  if (given !== undefined) return { digest: given, source: "option" };
  if (reported !== undefined) return { digest: reported, source: "adapter" };
  const command = driverCommandOf(opts);
  if (command !== undefined) {
    const words = opts.adapter ?? command.split(/\s+/).map((w) => w.replace(/^["']|["']$/g, ""));
    const file = words.find((w) => /\.(m?js|cjs|py|go|rb|ts|jar|exe)$/.test(w) && existsSync(w) && statSync(w).isFile());
    return file ? { digest: sha256(readFileSync(file)), source: "driver-script" } : { digest: sha256(command), source: "driver-command" };
  }
  if (opts.attach !== undefined) return { digest: sha256(`${hello.runtime.name} ${hello.runtime.version} ${opts.attach}`), source: "attach-url" };
  return { digest: sha256(readFileSync(fileURLToPath(import.meta.url))), source: "harness" };
}

const DIGEST_SOURCE_NOTE: Record<RuntimeDigestSource, string> = {
  adapter: "reported by the adapter",
  option: "given with --runtime-digest",
  "driver-script": "NOT the runtime artifact: the adapter reports no digest, so this is the sha256 of the script its command names",
  "driver-command": "NOT the runtime artifact: the adapter reports no digest, so this is the sha256 of its command line",
  "attach-url": "NOT the runtime artifact: the adapter reports no digest, so this is the sha256 of its name, version and URL",
  harness: "NOT the runtime artifact: the sha256 of pulse-conform's own code",
};

export function parseOnly(value: string | undefined): number[] | undefined {
  if (value === undefined) return undefined;
  const numbers = value.split(",").map((part) => Number(part.trim()));
  if (numbers.length === 0 || numbers.some((n) => !Number.isInteger(n) || n < 1 || n > 12)) throw new UsageError(`--only takes test numbers 1-12 separated by commas, got "${value}"`);
  return [...new Set(numbers)].sort((a, b) => a - b);
}

/** A shell line that reruns one test as it ran, quoted so that it runs when pasted as printed. */
export function reproLine(opts: ConformCliOptions, test: ConformanceTest, seed: number): string {
  const words = ["pulse-conform"];
  if (opts.driver !== undefined) words.push("--driver", shellQuote(opts.driver));
  if (opts.attach !== undefined) words.push("--attach", shellQuote(opts.attach));
  words.push("--only", String(test.number), "--seed", String(seed));
  if (opts.timing === "real") words.push("--timing", "real");
  if (opts.evidence === "driver") words.push("--evidence", "driver");
  // Test 12 judged these manifests: without them the rerun would judge none.
  if (test.number === 12) for (const m of opts.manifest ?? []) words.push("--manifest", shellQuote(m));
  if (opts.adapter !== undefined) words.push("--", shellJoin(opts.adapter));
  return words.join(" ");
}

const MARK: Record<TestResult["status"], string> = { passed: "✓", warned: "!", failed: "✗", errored: "E", not_tested: "-", flaky: "~", not_applicable: "·" };

export function progressLine(r: TestResult, color: boolean): string {
  const paint = (code: number, text: string) => (color ? `\x1b[${code}m${text}\x1b[0m` : text);
  const hue = r.status === "passed" ? 32 : r.status === "failed" || r.status === "errored" ? 31 : r.status === "not_applicable" ? 2 : 33;
  if (r.status === "not_applicable") return `${paint(hue, `${MARK[r.status]} ${String(r.number).padStart(2)} ${r.name.padEnd(36)} not applicable: ${r.reason ?? ""}`)}\n`;
  const lines = [`${paint(hue, MARK[r.status])} ${String(r.number).padStart(2)} ${r.name.padEnd(36)} ${paint(hue, r.status.padEnd(10))} ${String(r.duration_ms).padStart(6)} ms`];
  if (r.status !== "passed") {
    for (const c of r.checks.filter((c) => c.outcome !== "pass")) lines.push(...checkLines(c).map((l) => `       ${l}`));
    if (r.reason) lines.push(`       ${r.reason}`);
    lines.push(`       repro: ${r.repro}`);
  }
  return lines.join("\n") + "\n";
}

export async function runConform(opts: ConformCliOptions, io: CliIO): Promise<number> {
  const repeats = parseCount("--repeat", opts.repeat) ?? 1;
  if (repeats < 1) throw new UsageError("--repeat must be at least 1");
  const seed = parseCount("--seed", opts.seed) ?? 1;
  const only = parseOnly(opts.only);
  if (opts.timing !== undefined && opts.timing !== "virtual" && opts.timing !== "real") throw new UsageError(`--timing is virtual or real, got "${opts.timing}"`);
  if (opts.evidence !== undefined && opts.evidence !== "recording" && opts.evidence !== "driver") throw new UsageError(`--evidence is recording or driver, got "${opts.evidence}"`);
  if (opts.attest !== undefined && opts.key === undefined) throw new UsageError("--attest needs --key (a private key from pulse-conform keygen)");
  if (opts.attest !== undefined && opts.report === undefined) throw new UsageError("--attest signs the report: give --report FILE too");
  if (opts.driver !== undefined && opts.attach !== undefined) throw new UsageError("--driver and --attach cannot be combined: pick the adapter to run or the one to attach to");
  driverCommandOf(opts);
  parseRuntimeDigest(opts.runtimeDigest);
  // Found now, not after a run of minutes whose report then has nowhere to go.
  for (const [flag, file] of [["--report", opts.report], ["--attest", opts.attest], ["--junit", opts.junit], ["--markdown", opts.markdown], ["--badge", opts.badge]] as const) {
    if (file !== undefined) await checkWritable(flag, file);
  }
  let privateKey: { key: import("node:crypto").KeyObject; keyid: string } | undefined;
  if (opts.attest !== undefined) {
    const { loadPrivateKey, keyidOf, KeyError } = await import("../../conformance/attest/index.js");
    const { createPublicKey } = await import("node:crypto");
    try {
      const key = loadPrivateKey(await readFile(opts.key!, "utf8"));
      privateKey = { key, keyid: keyidOf(createPublicKey(key)) };
    } catch (e) {
      if (e instanceof KeyError || (e as NodeJS.ErrnoException).code === "ENOENT") throw new UsageError(`--key ${opts.key}: ${(e as Error).message}`);
      throw e;
    }
  }
  const manifests = await readCertifiedManifests(opts.manifest ?? [], io);
  const color = useColor(io, opts.color === false ? false : undefined);
  const startedAt = new Date();

  let session: Session;
  try {
    session = await openSession(opts, io);
  } catch (e) {
    if (e instanceof DriverFailure) return driverFailed(e, undefined, io);
    throw e;
  }
  const { driver, observer, hello } = session;
  if (opts.attest !== undefined && !ARTIFACT_DIGEST_SOURCES.includes(session.runtimeDigestSource)) {
    await observer.close();
    await driver.close().catch(() => undefined);
    throw new UsageError(
      "--attest needs the runtime artifact's digest, and the adapter reports none (hello.runtime.digest): give it with --runtime-digest sha256:<hex> (e.g. sha256sum of the artifact), or have the adapter report it",
    );
  }
  io.stdout(`pulse-conform: ${hello.runtime.name} ${hello.runtime.version} (${hello.runtime.language}) via ${driver.describe}; ${session.timing} clock, evidence ${observer.evidenceClass}${repeats > 1 ? `, ${repeats} repeats` : ""}\n`);
  const reported = hello.runtime.digest;
  const differs = session.runtimeDigestSource === "option" && reported !== undefined && reported !== session.runtimeDigest ? `; the adapter reports ${reported}` : "";
  io.stdout(`runtime digest ${session.runtimeDigest} (${DIGEST_SOURCE_NOTE[session.runtimeDigestSource]}${differs})\n\n`);
  const runOptions = {
    driver,
    observer,
    hello,
    timing: session.timing,
    repeats,
    seed,
    ...(only ? { only } : {}),
    manifests,
    repro: (test: ConformanceTest) => reproLine(opts, test, seed),
    onResult: (r: TestResult) => io.stdout(progressLine(r, color)),
    runtimeDigest: session.runtimeDigest,
    runtimeDigestSource: session.runtimeDigestSource,
  };
  let results: TestResult[];
  try {
    results = await runTests(runOptions);
  } catch (e) {
    if (e instanceof DriverFailure) {
      // The schema problems are what usually explain a protocol break: show them first.
      if (opts.validateProtocol && session.problems.length > 0) io.stderr(`protocol problems seen before the failure:\n${session.problems.slice(0, 20).map((p) => `  ${p}`).join("\n")}\n`);
      return driverFailed(e, driver, io);
    }
    throw e;
  } finally {
    await observer.close();
    await driver.close().catch(() => undefined);
  }
  const report = buildReport(runOptions, results, startedAt);
  await writeOutputs(report, opts, privateKey, io);
  if (opts.validateProtocol) {
    const problems = session.problems;
    io.stdout(problems.length === 0 ? "\nprotocol: every message matched its schema\n" : `\nprotocol: ${problems.length} message${problems.length === 1 ? "" : "s"} did not match the schemas:\n${problems.slice(0, 20).map((p) => `  ${p}`).join("\n")}\n`);
  }
  io.stdout(`\n${report.verdict}${report.certification ? "" : " (not a certification: tests were filtered)"}: ${hello.runtime.name} ${hello.runtime.version} against PULSE v${report.pulse_version} conformance suite ${report.suite_version}\n`);
  io.stdout(`${resultsLine(report.summary)}\n${closingLine(report.summary)}\n`);
  if (opts.validateProtocol && session.problems.length > 0) return CONFORM_EXIT.driver;
  return exitCodeOf(report.verdict);
}

export function driverFailed(e: DriverFailure, driver: Driver | undefined, io: CliIO, name = "pulse-conform"): number {
  io.stderr(`${name}: driver failure: ${e.message}\n`);
  if (e.during) io.stderr(`during ${e.during}\n`);
  const tail = e.stderrTail ?? driver?.stderrTail() ?? [];
  if (tail.length > 0) io.stderr(`the adapter's last stderr lines:\n${tail.slice(-15).map((l) => `  | ${l}`).join("\n")}\n`);
  io.stderr("no verdict: the run stopped before the suite finished\n");
  return CONFORM_EXIT.driver;
}

export async function checkWritable(flag: string, file: string): Promise<void> {
  const fail = (reason: string) => new UsageError(`${flag} ${file}: cannot write there: ${reason}`);
  const existing = await stat(file).catch(() => undefined);
  if (existing?.isDirectory()) throw fail("it is a directory");
  if (existing) {
    await access(file, constants.W_OK).catch(() => Promise.reject(fail("permission denied")));
    return;
  }
  const dir = await stat(dirname(file)).catch(() => undefined);
  if (!dir) throw fail(`no such directory ${dirname(file)}`);
  if (!dir.isDirectory()) throw fail(`${dirname(file)} is not a directory`);
  await access(dirname(file), constants.W_OK | constants.X_OK).catch(() => Promise.reject(fail(`permission denied in ${dirname(file)}`)));
}

async function readCertifiedManifests(operands: string[], io: CliIO): Promise<{ file: string; value: Record<string, unknown> }[]> {
  if (operands.length === 0) return [];
  const sources = await readManifestSources(operands, undefined, io, DEFAULT_MAX_BYTES);
  const invalid = validateSources(sources).filter((r) => !r.valid);
  if (invalid.length > 0) throw new UsageError(`--manifest: ${invalid.map((r) => r.file).join(", ")} ${invalid.length === 1 ? "is" : "are"} not valid (pulse validate shows why); only valid manifests can be certified`);
  return sources.map((s) => ({ file: s.file, value: s.value as Record<string, unknown> }));
}

export async function writeOutputs(report: ConformanceReport, opts: ConformCliOptions, privateKey: { key: import("node:crypto").KeyObject; keyid: string } | undefined, io: CliIO): Promise<void> {
  const reportText = JSON.stringify(report, null, 2) + "\n";
  const written: string[] = [];
  if (opts.report !== undefined) {
    await writeAtomically(opts.report, opts.report, reportText);
    written.push(`report ${opts.report}`);
  }
  if (opts.attest !== undefined && privateKey) {
    const { attestReport } = await import("../../conformance/attest/index.js");
    const envelope = attestReport(report, Buffer.from(reportText), privateKey.key, privateKey.keyid);
    await writeAtomically(opts.attest, opts.attest, JSON.stringify(envelope, null, 2) + "\n");
    written.push(`attestation ${opts.attest}`);
  }
  if (opts.junit !== undefined) {
    const { formatJunit } = await import("../../conformance/report/junit.js");
    await writeAtomically(opts.junit, opts.junit, formatJunit(report));
    written.push(`JUnit ${opts.junit}`);
  }
  if (opts.markdown !== undefined) {
    const { formatMarkdown } = await import("../../conformance/report/markdown.js");
    await writeAtomically(opts.markdown, opts.markdown, formatMarkdown(report));
    written.push(`Markdown ${opts.markdown}`);
  }
  if (opts.badge !== undefined) {
    const { badgeOf } = await import("../../conformance/report/badge.js");
    await writeAtomically(opts.badge, opts.badge, JSON.stringify(badgeOf(report)) + "\n");
    written.push(`badge ${opts.badge}`);
  }
  if (written.length > 0) io.stdout(`\nwrote ${written.join(", ")}\n`);
}
