// The test command: build (bins are tested as shipped), typecheck, then every vitest suite.
// It ends with one line CI reads: `N passed, N failed` (a failed build or typecheck counts).
import { spawnSync } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";

const npx = process.platform === "win32" ? "npx.cmd" : "npx";
let failedSteps = 0;

function step(name, cmd, args) {
  console.log(`\n> ${name}`);
  const r = spawnSync(cmd, args, { stdio: "inherit" });
  if (r.status !== 0) {
    console.log(`${name} failed (exit ${r.status ?? r.signal})`);
    failedSteps++;
    return false;
  }
  return true;
}

step("build", "npm", ["run", "--silent", "build"]);
step("typecheck", npx, ["tsc", "-p", "tsconfig.json"]);

const resultsFile = ".vitest-results.json";
rmSync(resultsFile, { force: true });
const extra = process.argv.slice(2);
step("vitest", npx, ["vitest", "run", "--reporter=default", "--reporter=json", `--outputFile.json=${resultsFile}`, ...extra]);

let passed = 0;
let failed = failedSteps;
try {
  const results = JSON.parse(readFileSync(resultsFile, "utf8"));
  passed += results.numPassedTests;
  failed += results.numFailedTests;
  // A suite that fails to load has no failed tests but must still fail the run.
  failed += results.testResults.filter((s) => s.status === "failed" && s.assertionResults.every((a) => a.status !== "failed")).length;
} catch {
  failed++;
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
