/**
 * The studio as a user sees it, in real headless Chromium (Debian's, driven by playwright-core)
 * against a real `pulse studio` process hosting a shipped loop over a store that holds a coding
 * session the scripted agent drove until its budget paused it. Screenshots of each view go to a
 * temporary directory, or to docs/studio/ with PULSE_STUDIO_SCREENSHOTS=1 (docs/studio.md shows them).
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeWhen } from "../helpers/requires.js";
import { ROOT, runBin } from "../cli/run-bin.js";
import { tempRepos, worktreesRoot } from "../session/helpers.js";
import { startStudio, type Studio } from "./studio-process.js";
import { FIXED_ADD, PREFLIGHT, start as startWorkflow, turn, worlds, writeFile, writeScript } from "../workflow/helpers.js";

const CHROMIUM = "/usr/bin/chromium";
// page.evaluate callbacks run in the browser (the project does not compile against the DOM library).
declare const location: { hash: string };
const FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];
const HELLO = join(ROOT, "manifests/examples/hello.loop.yaml");
const SHOTS = process.env.PULSE_STUDIO_SCREENSHOTS ? join(ROOT, "docs/studio") : mkdtempSync(join(tmpdir(), "pulse-studio-shots-"));
const repos = tempRepos();
const world = worlds();
const step = (n: number, extra: Record<string, unknown> = {}) => ({ match: { iteration: n }, files: { [`f${n}.txt`]: `${n}\n` }, commit: `feat: step ${n}`, text: `Step ${n} done. <signal>CONTINUE</signal>`, ...extra });

describeWhen(existsSync(CHROMIUM), `${CHROMIUM} (Debian's chromium package) to load the studio`)("pulse studio in Chromium", () => {
  let browser: Browser;
  let page: Page;
  let studio: Studio;
  let sessionId: string;
  let workflowId: string;
  let agentRunId: string;
  let report: string;
  let notReport: string;

  beforeAll(async () => {
    const repo = repos();
    const script = join(repo, ".pulse-script.json");
    writeFileSync(script, JSON.stringify({ steps: [step(1, { costUsd: 0.5 }), step(2, { costUsd: 0.5 }), { match: { iteration: 3 }, text: "All done. <signal>COMPLETE</signal>", costUsd: 0.25 }] }));
    writeFileSync(join(repo, ".git", "info", "exclude"), ".pulse-script.json\n");
    const store = join(repo, ".pulse", "pulse.db");
    const env = { HOME: repo, PULSE_WORKTREES: worktreesRoot() };
    const started = runBin("pulse", ["session", "start", "--goal", "Write three files", "--driver", "scripted", "--script", script, "--max-cost", "0.75", "--verify", "true", "--verify-each", "--store", store], { cwd: repo, env });
    expect(started.code, started.stderr).toBe(0);
    const [s] = JSON.parse(runBin("pulse", ["session", "list", "--json", "--store", store], { cwd: repo, env }).stdout);
    expect(s).toMatchObject({ status: "paused", current_iteration: 2 });
    sessionId = s.id;
    // A workflow and an agent run recorded in the same store: the studio lists every loop's runs.
    const w = { ...world(), store };
    const flow = startWorkflow(w, writeFile(w, "plan.md", "- Fix add\n"), writeScript(w, [PREFLIGHT(), turn(1, { "src/math.js": FIXED_ADD }, "fix(math): add adds")]), ["--json"]);
    expect(flow.code, flow.stderr).toBe(0);
    workflowId = JSON.parse(flow.stdout).workflow.id;
    const home = join(mkdtempSync(join(tmpdir(), "pulse-studio-agent-")), "home");
    cpSync(join(ROOT, "examples/agent/home"), home, { recursive: true, filter: (src) => !/\/examples\/agent\/home\/(logs|runs|cache|agent\.db)/.test(src) });
    const agent = runBin("pulse", ["agent", "run", "--request", "Welcome Ada", "--auto", "--driver", "scripted", "--script", join(ROOT, "examples/agent/welcome.json"), "--home", home, "--store", store, "--json"], { cwd: repo, env });
    expect(agent.code, agent.stderr).toBe(0);
    agentRunId = JSON.parse(agent.stdout).runId;
    const dir = mkdtempSync(join(tmpdir(), "pulse-studio-report-"));
    report = join(dir, "hello.report.json");
    const conform = runBin("pulse-conform", ["--loop", HELLO, "--report", report], { cwd: dir });
    expect(conform.code, conform.stderr).toBe(0);
    notReport = join(dir, "package.json");
    writeFileSync(notReport, JSON.stringify({ name: "not-a-report" }));
    mkdirSync(SHOTS, { recursive: true });
    studio = await startStudio(repo, ["--store", store, HELLO], env);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS });
    page = await browser.newPage({ viewport: { width: 1360, height: 900 } });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    expect(await studio?.stop()).toBe(0);
  }, 30_000);

  const api = async (path: string) => (await fetch(`${studio.url}${path}`)).json() as Promise<any>;
  const go = (hash: string) => page.evaluate((h) => (location.hash = h), hash);

  it("shows the system's diagram with the loop's status, cadence and last iteration", async () => {
    await page.goto(`${studio.url}/`);
    await page.locator("#diagram svg").waitFor();
    expect(await page.locator("#diagram svg g.cluster").count()).toBeGreaterThan(0);
    const card = page.locator('[data-loop="examples.hello"]');
    await expect.poll(() => card.locator(".last").textContent(), { timeout: 10_000 }).toMatch(/#\d+/);
    expect(await card.textContent()).toContain("periodic interval=2s");
    await expect.poll(() => page.locator("#live").textContent()).toBe("live");
    await page.screenshot({ path: join(SHOTS, "system.png") });
  });

  it("shows iterations appear live in the loop's timeline, with telemetry", async () => {
    await page.locator('[data-loop="examples.hello"] .loop-link').click();
    await page.locator("#iterations .iteration-row").first().waitFor();
    const newest = Number(await page.locator(".iteration-row").first().getAttribute("data-iteration"));
    // The periodic cadence (2 s) runs the next one; the page learns of it over the feed only.
    await page.locator(`.iteration-row[data-iteration="${newest + 1}"]`).waitFor({ timeout: 10_000 });
    await expect.poll(() => page.locator(`.iteration-row[data-iteration="${newest + 1}"] td.cell.completed`).count(), { timeout: 5_000 }).toBe(4);
    expect(Number(await page.locator("#iteration-count").textContent())).toBeGreaterThanOrEqual(1);
    expect(await page.locator("#phase-stats").textContent()).toMatch(/fetch\d+\d+ ms/);
    // κ as a chart: a bar per bucket, the route phase's κ 0 counted in the first.
    expect(await page.locator("#kappa-chart .kappa-bar").count()).toBe(5);
    expect(Number(await page.locator('#kappa-chart .kappa-bar[data-bucket="0"]').getAttribute("data-count"))).toBeGreaterThanOrEqual(1);
    await page.screenshot({ path: join(SHOTS, "loop.png"), fullPage: false });
  });

  it("pauses the loop from the page: the host stops starting iterations until resumed", async () => {
    await page.locator("#pause").click();
    await page.locator('#loop-status .status[data-status="paused"]').waitFor();
    expect((await api("/api/loops/examples.hello")).card.status).toBe("paused");
    const atPause = (await api("/api/loops/examples.hello")).card.iterations;
    await new Promise((r) => setTimeout(r, 3_000));
    // Two cadence ticks later, nothing new started.
    expect((await api("/api/loops/examples.hello")).rows.filter((r: any) => r.status === "running")).toEqual([]);
    expect((await api("/api/loops/examples.hello")).card.iterations).toBe(atPause);
    await page.locator("#resume").click();
    await expect.poll(async () => (await api("/api/loops/examples.hello")).card.status).not.toBe("paused");
    await expect.poll(async () => (await api("/api/loops/examples.hello")).card.iterations, { timeout: 8_000 }).toBeGreaterThan(atPause);
  });

  it("opens an iteration's trace: phases with signatures and outputs, and its audit events; the search box finds traces", async () => {
    await page.locator(".iteration-row").nth(1).click();
    await page.locator("#trace-phases").waitFor();
    expect(await page.locator("#trace-phases tr[data-phase]").count()).toBe(4);
    expect(await page.locator("#trace-phases .signature").first().textContent()).toMatch(/^blake3:[0-9a-f]{64}$/);
    expect(await page.locator("#output-0").textContent()).toContain("query");
    expect(await page.locator("#trace-audit tr").count()).toBeGreaterThan(4);
    expect(await page.locator("#trace-audit").textContent()).toContain("iteration.started");
    // The substrate calls: hello's apply and learn store nodes in memory (substrate.mutated).
    expect(await page.locator('#trace-substrate tr[data-phase="apply"]').textContent()).toContain("store_node");
    expect(await page.locator('#trace-phases tr[data-phase="apply"] .substrate-calls').textContent()).toBe("1");
    expect(await page.locator('#trace-phases tr[data-phase="fetch"] .substrate-calls').textContent()).toBe("0");
    await page.screenshot({ path: join(SHOTS, "trace.png") });
    await page.locator("#trace-search").fill("examples.hello");
    await page.locator("#trace-go").click();
    await page.locator("#trace-list").waitFor();
    expect(await page.locator("#trace-list tr").count()).toBeGreaterThan(2);
  });

  it("lists the coding session and shows its run page: gate and cost cells side by side, the budget bar", async () => {
    await go("#/runs");
    const row = page.locator(`.run-row[data-run="${sessionId}"]`);
    await row.waitFor();
    expect(await row.textContent()).toContain("2/10");
    await row.click();
    await page.locator('#run-status .status[data-status="paused"]').waitFor();
    const first = page.locator('#run-iterations tr[data-iteration="1"]');
    expect(await first.locator(".gate-cell").textContent()).toContain("passed");
    expect(await first.locator(".gate-cell").textContent()).toContain("true exit 0");
    expect(await first.locator(".cost-cell").textContent()).toContain("$0.50");
    // The receipt beside the cost: where the price came from (the scripted agent reports its own).
    expect(await first.locator(".cost-cell .receipt").textContent()).toContain("price from driver");
    expect(await page.locator("#budget").textContent()).toContain("spent $1.00 of $0.75");
    expect(await page.locator("#run-reason").textContent()).toContain("max-cost");
    await page.screenshot({ path: join(SHOTS, "run.png"), fullPage: true });
  });

  it("lists the workflow and the agent run beside the session, and opens each one's page: pulses with commit and gate, steps with action and feedback", async () => {
    await go("#/runs");
    const flowRow = page.locator(`.run-row[data-run="${workflowId}"]`);
    await flowRow.waitFor();
    expect(await flowRow.textContent()).toMatch(/workflow.*completed.*Fix add|workflow.*completed/);
    expect(await flowRow.textContent()).toContain("1/1");
    const agentRow = page.locator(`.run-row[data-run="${agentRunId}"]`);
    expect(await agentRow.textContent()).toContain("Welcome Ada");
    expect(await agentRow.textContent()).toContain("succeeded");
    await page.screenshot({ path: join(SHOTS, "runs.png"), fullPage: true });
    await flowRow.click();
    await page.locator('#run-status .status[data-status="completed"]').waitFor();
    const pulse = page.locator('#run-pulses tr[data-pulse="1"]');
    expect(await pulse.locator(".commit-cell").textContent()).toMatch(/^[0-9a-f]{10}$/);
    expect(await pulse.locator(".gate-cell").textContent()).toContain("passed");
    expect(await pulse.textContent()).toContain("src/math.js");
    await page.screenshot({ path: join(SHOTS, "run-workflow.png"), fullPage: true });
    await go(`#/run/agent/${agentRunId}`);
    await page.locator('#run-status .status[data-status="succeeded"]').waitFor();
    const first = page.locator('#run-steps tr[data-step="1"]');
    expect(await first.locator(".action-cell").textContent()).toContain("greet");
    expect(await first.locator(".decision-cell").textContent()).toContain("execute");
    expect(await first.locator(".feedback-cell").textContent()).toMatch(/\d\/5/);
    expect(await page.locator("#run-steps tr[data-step]").count()).toBe((await api(`/api/runs/agent/${agentRunId}`)).iterations.length);
    await page.screenshot({ path: join(SHOTS, "run-agent.png"), fullPage: true });
    await go(`#/run/session/${sessionId}`);
    await page.locator("#run-iterations").waitFor();
  });

  it("raises the paused session's budget from the page, and it continues to completion", async () => {
    await page.locator("#raise-cost").fill("5");
    await page.locator("#run-resume").click();
    await page.locator('#run-status .status[data-status="complete"]').waitFor({ timeout: 30_000 });
    expect(await page.locator('#run-iterations tr[data-iteration="3"]').textContent()).toContain("COMPLETE");
    const d = await api(`/api/runs/session/${sessionId}`);
    expect(d.run).toMatchObject({ status: "complete", iteration: 3, budget: { max_cost_usd: 5 } });
    expect(d.run.cost_usd).toBeCloseTo(1.25, 5);
    await page.screenshot({ path: join(SHOTS, "run-complete.png"), fullPage: true });
  });

  it("with a token: the page opened from the printed address reads the API and the feed; without it, it says it is refused", async () => {
    const dir = mkdtempSync(join(tmpdir(), "pulse-studio-token-"));
    const guarded = await startStudio(dir, ["--store", "memory:", "--no-kickoff", "--token", "page-token-0123456789abcdef", HELLO]);
    const other = await browser.newPage();
    try {
      await other.goto(`${guarded.url}/`);
      await other.locator("#view-error").waitFor();
      expect(await other.locator("#view-error").textContent()).toContain("Authorization: Bearer");
      await other.goto(`${guarded.url}/#token=${guarded.token}`);
      await other.locator('[data-loop="examples.hello"]').waitFor();
      await expect.poll(() => other.locator("#live").textContent()).toBe("live");
      // The token left the address at once: it is not in the history or a bookmark.
      expect(other.url()).not.toContain("token");
    } finally {
      await other.close();
      expect(await guarded.stop()).toBe(0);
    }
  });

  it("opens a pulse-conform report: the twelve tests, their checks and the badge; a JSON file that is no report is refused", async () => {
    await go("#/conformance");
    await page.locator("#report-file").setInputFiles(notReport);
    await page.locator("#report-error").waitFor();
    expect(await page.locator("#report-error").textContent()).toContain("not a pulse-conform report");
    await page.locator("#report-file").setInputFiles(report);
    await page.locator("#badge").waitFor();
    expect(await page.locator("#badge").textContent()).toMatch(/PULSE v0\.1 loop.*conformant \d+\/\d+ applicable/);
    expect(await page.locator("#conformance-tests tr[data-test]").count()).toBe(12);
    expect(await page.locator('#conformance-tests tr[data-test="6"]').textContent()).toContain("audit_event_per_phase");
    await page.screenshot({ path: join(SHOTS, "conformance.png"), fullPage: true });
  });
});
