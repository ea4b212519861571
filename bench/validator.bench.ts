/**
 * Issue 2, issue 30: in-process validation of the §4 manifest (schema + every semantic rule +
 * positioned diagnostics) beside a bare compiled ajv validation of the same document: the same
 * parsed object every call, and documents freshly parsed from JSONC and from YAML (parsing is
 * done before the clock starts, for both sides), so that nothing tied to one object's identity
 * or shape history can flatter the figure.
 */
import { readFileSync } from "node:fs";
import os from "node:os";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormatsMod from "ajv-formats";
import { stringify as toYaml } from "yaml";
import { readSource, type ManifestSource } from "../src/source/load.js";
import { parseSourceText } from "../src/source/parse-text.js";
import { validateSources } from "../src/validator/validate.js";
import { median, report } from "./measure.js";

const addFormats = ((addFormatsMod as unknown as { default?: unknown }).default ?? addFormatsMod) as (ajv: Ajv2020) => void;
const root = new URL("../../", import.meta.url);
const source = await readSource(new URL("test/fixtures/spec/graphonomous.jsonc", root).pathname);
const ajv = new Ajv2020({ strict: false });
addFormats(ajv);
const bare = ajv.compile(JSON.parse(readFileSync(new URL("schema/pulse-loop-manifest.v0.1.json", root), "utf8")));
const yamlText = toYaml(source.value);

const ROUNDS = 11;
/** Small enough that a batch parsed just before it is timed still sits in the cache, as a user's just-parsed file does. */
const BATCH = 16;
const gc = (globalThis as { gc?: (options?: { type: "minor" | "major" }) => void }).gc;

type Make = () => ManifestSource;
/** Batches per round: a YAML parse costs far more than a validation, so fewer of them. */
const BATCHES: Record<string, number> = { reused: 400, jsonc: 150, yaml: 40 };
const kinds: Record<string, Make> = {
  reused: () => source,
  jsonc: () => parseSourceText("graphonomous.jsonc", source.text, "json"),
  yaml: () => parseSourceText("graphonomous.yaml", yamlText, "yaml"),
};

function timeBatch(fn: (s: ManifestSource) => unknown, batch: readonly ManifestSource[]): number {
  // The parse just before leaves the young generation full of its garbage: collect it first, so
  // the scavenge it would cost is not charged to whichever side allocates first.
  gc?.({ type: "minor" });
  const start = process.hrtime.bigint();
  for (let i = 0; i < batch.length; i++) fn(batch[i] as ManifestSource);
  return Number(process.hrtime.bigint() - start);
}
const bareCall = (s: ManifestSource): unknown => bare(s.value);
const pulseCall = (s: ManifestSource): unknown => validateSources([s]);

/**
 * Bare and pulse each get their own batch of documents, parsed (untimed) just before, and take
 * turns going first, so neither sees an object the other walked. A round's figure is the median
 * of its batches: on a shared machine a batch the scheduler interrupted is an outlier, not a mean.
 */
function round(make: Make, batches: number): { bare: number; pulse: number } {
  gc?.();
  const bareNs: number[] = [];
  const pulseNs: number[] = [];
  for (let i = 0; i < batches; i++) {
    const a = Array.from({ length: BATCH }, make);
    const b = Array.from({ length: BATCH }, make);
    if (i & 1) {
      bareNs.push(timeBatch(bareCall, a));
      pulseNs.push(timeBatch(pulseCall, b));
    } else {
      pulseNs.push(timeBatch(pulseCall, a));
      bareNs.push(timeBatch(bareCall, b));
    }
  }
  return { bare: median(bareNs) / BATCH, pulse: median(pulseNs) / BATCH };
}

const samples: Record<string, { bare: number[]; pulse: number[] }> = {};
for (const name of Object.keys(kinds)) samples[name] = { bare: [], pulse: [] };
for (let r = -2; r < ROUNDS; r++) {
  for (const [name, make] of Object.entries(kinds)) {
    const t = round(make, BATCHES[name]!);
    if (r < 0) continue;
    samples[name]!.bare.push(t.bare);
    samples[name]!.pulse.push(t.pulse);
  }
}

const rows = [];
let worst = 0;
const label = { reused: "same parsed object", jsonc: "freshly parsed JSONC", yaml: "freshly parsed YAML" } as Record<string, string>;
for (const name of Object.keys(kinds)) {
  const b = median(samples[name]!.bare);
  const p = median(samples[name]!.pulse);
  const ratios = samples[name]!.pulse.map((v, i) => v / samples[name]!.bare[i]!).sort((x, y) => x - y);
  const ratio = p / b;
  worst = Math.max(worst, ratio);
  rows.push({ name: `${label[name]}: bare compiled ajv / pulse`, value: `${(b / 1000).toFixed(2)} µs / ${(p / 1000).toFixed(2)} µs` });
  rows.push({ name: `${label[name]}: ratio (median; rounds' range)`, value: `${ratio.toFixed(2)}× (${ratios[0]!.toFixed(2)}–${ratios[ratios.length - 1]!.toFixed(2)}×)` });
}
rows.push({ name: "load average when run (2 cores)", value: os.loadavg()[0]!.toFixed(1) });
report({
  title: "Validator, in process: §4 manifest (test/fixtures/spec/graphonomous.jsonc)",
  rows,
  target: "≤ 3× bare ajv, same object and freshly parsed JSONC and YAML",
  met: worst <= 3,
});
