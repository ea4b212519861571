/**
 * Issue 2: in-process validation of the §4 manifest (schema + every semantic rule + positioned
 * diagnostics) beside a bare compiled ajv validation of the same document.
 */
import { readFileSync } from "node:fs";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormatsMod from "ajv-formats";
import { readSource } from "../src/source/load.js";
import { validateSources } from "../src/validator/validate.js";
import { interleaved, report } from "./measure.js";

const addFormats = ((addFormatsMod as unknown as { default?: unknown }).default ?? addFormatsMod) as (ajv: Ajv2020) => void;
const root = new URL("../../", import.meta.url);
const source = await readSource(new URL("test/fixtures/spec/graphonomous.jsonc", root).pathname);
const ajv = new Ajv2020({ strict: false });
addFormats(ajv);
const bare = ajv.compile(JSON.parse(readFileSync(new URL("schema/pulse-loop-manifest.v0.1.json", root), "utf8")));

const t = interleaved(
  {
    bare: () => bare(source.value),
    pulse: () => validateSources([source]),
  },
  { iterations: 20_000, rounds: 15 },
);
const ratio = t.pulse! / t.bare!;
report({
  title: "Validator, in process: §4 manifest (test/fixtures/spec/graphonomous.jsonc)",
  rows: [
    { name: "bare compiled ajv (same schema, ajv-formats)", value: `${(t.bare! / 1000).toFixed(2)} µs` },
    { name: "pulse: schema + all semantic rules + positions", value: `${(t.pulse! / 1000).toFixed(2)} µs` },
    { name: "ratio", value: `${ratio.toFixed(2)}×` },
  ],
  target: "≤ 3× bare ajv",
  met: ratio <= 3,
});
