// The closing lines of `npm test`, from vitest's JSON results: skipped and todo tests (each skip
// with its reason), lost tests, and the counts. Pure, so a test can feed it results.
const REASON = /\((?:skipped|not run|requires): [^)]*\)/;

/**
 * `filtered`: the run was narrowed by arguments, so fewer tests run by design and the checks for
 * the whole suite (reasons, the declared minimum) do not apply.
 */
export function summarizeResults(results, { declaredMinimum, filtered = false, failedSteps = 0 }) {
  const lines = [];
  let passed = results.numPassedTests;
  let failed = failedSteps + results.numFailedTests;
  // A suite that fails to load has no failed tests but must still fail the run.
  const unloaded = results.testResults.filter((s) => s.status === "failed" && s.assertionResults.every((a) => a.status !== "failed"));
  for (const s of unloaded) lines.push(`suite failed to load: ${s.name}: ${(s.message ?? "").split("\n")[0]}`);
  failed += unloaded.length;

  const tests = results.testResults.flatMap((s) => s.assertionResults);
  const skipped = tests.filter((t) => t.status === "skipped" || t.status === "pending");
  const todo = tests.filter((t) => t.status === "todo");
  const name = (t) => t.fullName ?? [...t.ancestorTitles, t.title].join(" ");
  lines.push("", `${skipped.length} skipped, ${todo.length} todo${skipped.length || todo.length ? ":" : ""}`);
  for (const t of skipped) lines.push(`  skipped: ${name(t)}`);
  for (const t of todo) lines.push(`  todo: ${name(t)}`);

  if (!filtered) {
    for (const t of skipped.filter((t) => !REASON.test([...t.ancestorTitles, t.title].join(" ")))) {
      lines.push(`a skipped test must say why in its title, "(skipped: …)": ${name(t)}`);
      failed++;
    }
    const ran = results.numPassedTests + results.numFailedTests;
    if (ran < declaredMinimum) {
      lines.push(`only ${ran} tests ran, fewer than the ${declaredMinimum} that test/declared-tests.json declares: tests were lost (a file no longer collected, a skip too many)`);
      failed++;
    }
  }
  lines.push(`${passed} passed, ${failed} failed`);
  return { lines, passed, failed };
}
