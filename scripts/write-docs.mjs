// Regenerates the documentation pages rendered from code (run after `npm run build`).
import { writeFileSync } from "node:fs";
import { renderRulesMarkdown } from "../dist/src/validator/rules-doc.js";

writeFileSync(new URL("../docs/rules.md", import.meta.url), renderRulesMarkdown());
console.log("wrote docs/rules.md");
