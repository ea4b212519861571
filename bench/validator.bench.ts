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

const BATCH = 2_000;
const ROUNDS = 15;

function fresh(kind: "jsonc" | "yaml"): ManifestSource[] {
  const out: ManifestSource[] = [];
  for (let i = 0; i < BATCH; i++) out.push(kind === "jsonc" ? parseSourceText("graphonomous.jsonc", source.text, "json") : parseSourceText("graphonomous.yaml", yamlText, "yaml"));
  return out;
}

const gc = (globalThis as { gc?: () => void }).gc;

function time(fn: (s: ManifestSource) => unknown, batch: readonly ManifestSource[]): number {
  gc?.();
  const start = process.hrtime.bigint();
  for (let i = 0; i < batch.length; i++) fn(batch[i] as ManifestSource);
  return Number(process.hrtime.bigint() - start) / batch.length;
}

const bareCall = (s: ManifestSource): unknown => bare(s.value);
const pulseCall = (s: ManifestSource): unknown => validateSources([s]);
const reused = Array.from({ length: BATCH * 5 }, () => source);
const kinds = { reused: () => reused, jsonc: () => fresh("jsonc"), yaml: () => fresh("yaml") } as const;
const samples: Record<string, { bare: number[]; pulse: number[] }> = {};
for (const name of Object.keys(kinds)) samples[name] = { bare: [], pulse: [] };

for (let r = -2; r < ROUNDS; r++) {
  for (const [name, make] of Object.entries(kinds)) {
    // Each side gets its own fresh batch: neither sees objects the other already walked.
    const a = make();
    const b = make();
    const first = r % 2 === 0;
    const tb = time(bareCall, first ? a : b);
    const tp = time(pulseCall, first ? b : a);
    if (r >= 0) {
      samples[name]!.bare.push(tb);
      samples[name]!.pulse.push(tp);
    }
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
