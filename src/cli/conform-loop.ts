/**
 * `pulse-conform --loop manifest.yaml [--handlers module.js]`: certify a loop rather than a
 * runtime. The tests of §12 that apply to the loop's structure run on pulse's own runtime with the
 * loop's handlers (pulse's recording handlers for the phases the module does not cover); the
 * others are not_applicable, with the reason. The loops it names are taken from --with (default:
 * the manifest's directory, searched recursively), and scripted stand-ins play the ones not found.
 */
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { HandlersError, loadHandlerModule, RECORDING_ONLY } from "../../conformance/loop/handlers.js";
import { buildLoopReport, runLoopTests } from "../../conformance/loop/runner.js";
import { companionsOf, loopId, standIn, type LoopSubject, type ManifestValue } from "../../conformance/loop/subject.js";
import type { LoopTest } from "../../conformance/loop/test.js";
import { closingLine, exitCodeOf, resultsLine } from "../../conformance/report/summary.js";
import type { TestResult } from "../../conformance/report/types.js";
import { shellQuote } from "../../conformance/driver/shell.js";
import { DEFAULT_MAX_BYTES } from "../source/load.js";
import { validateSources } from "../validator/validate.js";
import { VERSION } from "../version.js";
import { checkWritable, parseOnly, progressLine, writeOutputs, type ConformCliOptions } from "./conform-command.js";
import { UsageError } from "./exit-codes.js";
import { parseCount, readManifestSources } from "./inputs.js";
import { useColor, type CliIO } from "./io.js";

export interface ConformLoopOptions extends ConformCliOptions {
  loop?: string;
  handlers?: string;
  with?: string[];
  input?: string;
}

/** Flags that name or shape a runtime under test: they mean nothing when the runtime is pulse's own, in process. */
const RUNTIME_ONLY: [keyof ConformLoopOptions, string][] = [
  ["driver", "--driver"],
  ["attach", "--attach"],
  ["adapter", "an adapter after --"],
  ["attest", "--attest"],
  ["key", "--key"],
  ["runtimeDigest", "--runtime-digest"],
  ["timing", "--timing"],
  ["evidence", "--evidence"],
  ["validateProtocol", "--validate-protocol"],
];

export function loopReproLine(opts: ConformLoopOptions, test: LoopTest, seed: number): string {
  const words = ["pulse-conform", "--loop", shellQuote(opts.loop!)];
  if (opts.handlers !== undefined) words.push("--handlers", shellQuote(opts.handlers));
  for (const w of opts.with ?? []) words.push("--with", shellQuote(w));
  if (opts.input !== undefined) words.push("--input", shellQuote(opts.input));
  words.push("--only", String(test.number), "--seed", String(seed));
  return words.join(" ");
}

async function readValid(operands: string[], io: CliIO): Promise<{ file: string; manifest: ManifestValue }[]> {
  const sources = await readManifestSources(operands, undefined, io, DEFAULT_MAX_BYTES);
  const verdicts = validateSources(sources);
  return sources.filter((_, i) => verdicts[i]!.valid).map((s) => ({ file: s.file, manifest: s.value as ManifestValue }));
}

export async function readSubject(opts: ConformLoopOptions, io: CliIO): Promise<LoopSubject> {
  const file = opts.loop!;
  const [source, ...rest] = await readManifestSources([file], undefined, io, DEFAULT_MAX_BYTES);
  if (!source || rest.length > 0) throw new UsageError(`--loop takes one manifest file, and ${file} holds ${rest.length + 1}: certify them one at a time`);
  const verdict = validateSources([source])[0]!;
  if (!verdict.valid) throw new UsageError(`--loop ${file} is not a valid manifest (pulse validate ${file} shows why); only a valid loop can be certified`);
  const manifest = source.value as ManifestValue;
  let input: unknown = {};
  if (opts.input !== undefined) {
    try {
      input = JSON.parse(opts.input);
    } catch (e) {
      throw new UsageError(`--input takes JSON (the input of the iterations the tests start), got ${JSON.stringify(opts.input)}: ${(e as Error).message}`);
    }
  }
  const candidates = (await readValid(opts.with && opts.with.length > 0 ? opts.with : [dirname(file)], io)).filter((c) => loopId(c.manifest) !== loopId(manifest));
  const { companions, missing } = companionsOf(manifest, candidates);
  const all = [manifest, ...companions.map((c) => c.manifest)];
  let handlers = RECORDING_ONLY;
  if (opts.handlers !== undefined) {
    try {
      handlers = await loadHandlerModule(resolve(io.cwd, opts.handlers));
    } catch (e) {
      if (e instanceof HandlersError) throw new UsageError(`--handlers ${opts.handlers}: ${e.message}`);
      throw e;
    }
    handlers = { ...handlers, source: opts.handlers };
  }
  return {
    file,
    manifest,
    digest: `sha256:${createHash("sha256").update(await readFile(resolve(io.cwd, file))).digest("hex")}`,
    companions,
    standIns: missing.map((id) => standIn(id, all)),
    handlers,
    input,
  };
}

export async function runConformLoop(opts: ConformLoopOptions, io: CliIO): Promise<number> {
  if (opts.attest !== undefined) throw new UsageError("--attest signs a runtime's certification; a loop report certifies a loop on pulse's runtime and is not signed (write it with --report)");
  for (const [key, flag] of RUNTIME_ONLY) {
    if (opts[key] !== undefined && opts[key] !== false) throw new UsageError(`--loop certifies a loop on pulse's own runtime: ${flag} does not apply to it (certify a runtime without --loop)`);
  }
  if ((opts.manifest ?? []).length > 0) throw new UsageError("--loop certifies one loop; --manifest adds manifests to a runtime's test 12: use one or the other");
  const repeats = parseCount("--repeat", opts.repeat) ?? 1;
  if (repeats < 1) throw new UsageError("--repeat must be at least 1");
  const seed = parseCount("--seed", opts.seed) ?? 1;
  const only = parseOnly(opts.only);
  for (const [flag, file] of [["--report", opts.report], ["--junit", opts.junit], ["--markdown", opts.markdown], ["--badge", opts.badge]] as const) {
    if (file !== undefined) await checkWritable(flag, file);
  }
  const subject = await readSubject(opts, io);
  const color = useColor(io, opts.color === false ? false : undefined);
  const startedAt = new Date();
  const id = loopId(subject.manifest);
  const names = (list: string[]) => (list.length === 0 ? "none" : list.join(", "));
  io.stdout(`pulse-conform: loop ${id} ${subject.manifest.version} (${subject.file}) on pulse ${VERSION}, in process, real time\n`);
  io.stdout(`handlers: ${subject.handlers.source === "recording" ? "pulse's recording handlers" : subject.handlers.source}; loops it names: ${names(subject.companions.map((c) => `${loopId(c.manifest)} (${c.file})`))}; stand-ins: ${names(subject.standIns.map((s) => loopId(s.manifest)))}\n\n`);
  const options = { subject, repeats, seed, ...(only ? { only } : {}), repro: (t: LoopTest) => loopReproLine(opts, t, seed), onResult: (r: TestResult) => io.stdout(progressLine(r, color)) };
  const run = await runLoopTests(options);
  if (subject.handlers.source !== "recording" && run.profile.recorded.length > 0) io.stdout(`\nphases without a handler in ${subject.handlers.source}, played by pulse's recording handlers: ${run.profile.recorded.join(", ")}\n`);
  const report = buildLoopReport(options, run, startedAt);
  await writeOutputs(report, opts, undefined, io);
  const applied = report.loop!.applied;
  const skipped = report.test_results.filter((r) => r.status === "not_applicable").map((r) => r.number);
  const filtered = only ? "; tests were filtered" : "";
  io.stdout(`\n${report.verdict}: loop ${id} ${subject.manifest.version} on pulse ${VERSION}, judged on the ${applied.length} test${applied.length === 1 ? "" : "s"} that apply to it (${applied.join(", ") || "none"})${skipped.length > 0 ? `; not applicable: ${skipped.join(", ")}` : ""}${filtered}\n`);
  io.stdout(`${resultsLine(report.summary)}\n${closingLine(report.summary)}\n`);
  return exitCodeOf(report.verdict);
}
