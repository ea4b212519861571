// The test command: build (bins are tested as shipped) unless dist/ was built from these very
// sources (npm ci's prepare script builds), typecheck, then every vitest suite. Colour only on a
// terminal. It ends with the skipped and todo counts (each skip with its reason), then one line
// CI reads: `N passed, N failed` (a failed build or typecheck counts as a failure, and so do
// tests lost: fewer run than test/declared-tests.json declares, or a skip that gives no reason).
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { buildInputsDigest, STAMP } from "./build-inputs.mjs";
import { summarizeResults } from "./test-summary.mjs";

const npx = process.platform === "win32" ? "npx.cmd" : "npx";
const terminal = process.stdout.isTTY === true;
// Piped (CI logs, `npm test | tee`), children print no colour codes; FORCE_COLOR still wins.
const env = terminal || process.env.FORCE_COLOR ? process.env : { ...process.env, NO_COLOR: "1" };
let failedSteps = 0;

function step(name, cmd, args) {
  console.log(`\n> ${name}`);
  const r = spawnSync(cmd, args, { stdio: "inherit", env });
  if (r.status !== 0) {
    console.log(`${name} failed (exit ${r.status ?? r.signal})`);
    failedSteps++;
    return false;
  }
  return true;
}

const built = existsSync(STAMP) && existsSync("dist/bin") && readFileSync(STAMP, "utf8").trim() === buildInputsDigest();
if (built) console.log("\n> build: dist/ is up to date with the sources (built by npm ci's prepare or an earlier build)");
else step("build", "npm", ["run", "--silent", "build"]);
step("typecheck", npx, ["tsc", "-p", "tsconfig.json", ...(terminal ? [] : ["--pretty", "false"])]);

const resultsFile = ".vitest-results.json";
rmSync(resultsFile, { force: true });
const extra = process.argv.slice(2);
// Its failures are counted from its results; its exit code counts only when they show none (a crash).
const vitestFailedSteps = failedSteps;
const vitestPassed = step("vitest", npx, ["vitest", "run", "--reporter=default", "--reporter=json", `--outputFile.json=${resultsFile}`, ...extra]);
if (!vitestPassed) failedSteps = vitestFailedSteps;

let summary;
try {
  const results = JSON.parse(readFileSync(resultsFile, "utf8"));
  const declaredMinimum = JSON.parse(readFileSync("test/declared-tests.json", "utf8")).minimumRun;
  summary = summarizeResults(results, { declaredMinimum, filtered: extra.length > 0, failedSteps });
  if (!vitestPassed && summary.failed === 0) {
    summary.lines.splice(-1, 1, "vitest failed without a failing test (see above)", `${summary.passed} passed, 1 failed`);
    summary.failed = 1;
  }
} catch (e) {
  summary = { lines: [`cannot read the test results: ${e instanceof Error ? e.message : String(e)}`, `0 passed, ${failedSteps + 1} failed`], failed: failedSteps + 1 };
}
for (const line of summary.lines) console.log(line);
process.exit(summary.failed === 0 ? 0 : 1);
