import { readSource } from "./dist/src/source/load.js";
import { validateSources } from "./dist/src/validator/validate.js";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormatsMod from "ajv-formats";
import { readFileSync } from "node:fs";
const addFormats = addFormatsMod.default ?? addFormatsMod;
const src = await readSource("test/fixtures/spec/graphonomous.jsonc");
const ajv = new Ajv2020({ strict: false }); addFormats(ajv);
const v = ajv.compile(JSON.parse(readFileSync("schema/pulse-loop-manifest.v0.1.json", "utf8")));
function time(fn, n) { for (let i = 0; i < 5000; i++) fn(); const t = process.hrtime.bigint(); for (let i = 0; i < n; i++) fn(); return Number(process.hrtime.bigint() - t) / n; }
for (let r = 0; r < 3; r++) { const a = time(() => v(src.value), 100000); const b = time(() => validateSources([src]), 50000); console.log(`ajv ${a.toFixed(0)}ns  ours ${b.toFixed(0)}ns  ratio ${(b / a).toFixed(2)}`); }
