/**
 * The system view lights up only the connection edge a signal travelled, in real headless
 * Chromium against a real `pulse studio` hosting examples.hello (whose learn phase signals
 * examples.listener), examples.listener, and graphonomous.deliberate, whose connections lead to
 * a loop not loaded here (its signals are never delivered, so its edges must stay dark).
 */
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeWhen } from "../helpers/requires.js";
import { ROOT } from "../cli/run-bin.js";
import { startStudio, type Studio } from "./studio-process.js";

const CHROMIUM = "/usr/bin/chromium";
const FLAGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];
const LOOPS = ["manifests/examples/hello.loop.yaml", "manifests/examples/listener.loop.yaml", "manifests/graphonomous.deliberate.yaml"].map((f) => join(ROOT, f));

describeWhen(existsSync(CHROMIUM), `${CHROMIUM} (Debian's chromium package) to load the studio`)("the system view's signal animation", () => {
  let browser: Browser;
  let studio: Studio;

  beforeAll(async () => {
    studio = await startStudio(mkdtempSync(join(tmpdir(), "pulse-studio-signal-")), ["--store", "memory:", ...LOOPS]);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    expect(await studio?.stop()).toBe(0);
  });

  it("flashes the edge from examples.hello to examples.listener as its signals are delivered, and no other", async () => {
    const page = await browser.newPage({ viewport: { width: 1360, height: 900 } });
    await page.goto(`${studio.url}/#/system`);
    await page.locator("#diagram svg").waitFor();
    const edges = page.locator("#diagram g.edge.connection");
    expect(await edges.count()).toBeGreaterThan(1);
    // hello iterates every 2 s and signals the listener each time.
    const travelled = page.locator('#diagram g.edge.connection[data-from="examples.hello"][data-to="examples.listener"]');
    await expect.poll(() => travelled.getAttribute("data-signals"), { timeout: 15_000 }).toMatch(/^[1-9]/);
    expect(await travelled.count()).toBe(1);
    const lit = await page.locator("#diagram g.edge.connection[data-signals]").count();
    expect(lit).toBe(1);
    // The other connection edges were located (graphonomous.deliberate's) and stayed dark.
    expect(await page.locator('#diagram g.edge.connection[data-from="graphonomous.deliberate"]').count()).toBeGreaterThan(0);
    await page.close();
  }, 30_000);
});
