/**
 * The diagrams as a reader sees them: rendered by Chromium (Debian's, driven by playwright-core),
 * measured on the page and checked pixel by pixel on PNG screenshots. The HTML page opens at a
 * readable size and zooms and pans; closures stay out of nested loops' boxes; cadence labels
 * stay inside their shape; the ring layout keeps the loop's title.
 */
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeWhen } from "../helpers/requires.js";
import { diagram } from "./helpers.js";
import { decodePng, type Image } from "./png.js";

const CHROMIUM = "/usr/bin/chromium";

// The page.evaluate callbacks run in the browser: its globals, loosely typed (the project does
// not compile against the DOM library).
declare const document: any;
declare const scrollX: number;
declare const scrollY: number;
const FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];

interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}

async function output(args: string[], ext: string): Promise<string> {
  const file = join(mkdtempSync(join(tmpdir(), "pulse-rendered-")), `diagram.${ext}`);
  const r = await diagram([...args, "-o", file]);
  expect(r.code, r.stderr).toBe(0);
  return file;
}

/** An SVG at its natural size on an otherwise empty page (1 CSS px per SVG px). */
async function showSvg(page: Page, args: string[]): Promise<void> {
  const svg = readFileSync(await output([...args, "-f", "svg"], "svg"), "utf8");
  const start = svg.indexOf("<svg");
  await page.setContent(`<!doctype html><html><body style="margin:0;background:#fff">${svg.slice(start)}</body></html>`);
}

async function shot(page: Page, css: string): Promise<Image> {
  const style = await page.addStyleTag({ content: css });
  const png = await page.screenshot({ fullPage: true });
  await style.evaluate((s) => s.remove());
  return decodePng(png);
}

function count(image: Image, rect: Rect, test: (r: number, g: number, b: number) => boolean): number {
  let n = 0;
  for (let y = Math.max(0, Math.ceil(rect.y)); y < Math.min(image.height, Math.floor(rect.y + rect.height)); y++) {
    for (let x = Math.max(0, Math.ceil(rect.x)); x < Math.min(image.width, Math.floor(rect.x + rect.width)); x++) {
      const o = (y * image.width + x) * 4;
      if (test(image.rgba[o]!, image.rgba[o + 1]!, image.rgba[o + 2]!)) n++;
    }
  }
  return n;
}

const shrink = (r: Rect, by: number): Rect => ({ x: r.x + by, y: r.y + by, width: r.width - 2 * by, height: r.height - 2 * by });
const isRed = (r: number, g: number, b: number) => r > 150 && g < 110 && b < 110;
const isDark = (r: number, g: number, b: number) => r + g + b < 300;

describeWhen(existsSync(CHROMIUM), `${CHROMIUM} (Debian's chromium package) to render the diagrams`)("diagrams rendered in Chromium", () => {
  let browser: Browser;
  let page: Page;
  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
  });

  /** The median on-screen height of the phase labels' text, in CSS pixels. */
  const labelHeight = () =>
    page.evaluate(() => {
      const heights = [...document.querySelectorAll("g.node.phase text")].map((t: any) => t.getBoundingClientRect().height).sort((a: number, b: number) => a - b);
      return heights[Math.floor(heights.length / 2)] ?? 0;
    });

  describe("the HTML page", () => {
    it("opens a large system at a readable size (labels at least 9 px tall), to be panned", async () => {
      await page.goto(pathToFileURL(await output(["manifests/"], "html")).href);
      expect(await labelHeight()).toBeGreaterThanOrEqual(9);
      const { svgWidth, frameWidth, level } = await page.evaluate(() => ({
        svgWidth: document.querySelector("figure svg")!.getBoundingClientRect().width,
        frameWidth: document.querySelector("figure")!.clientWidth,
        level: document.getElementById("zoom-level").value,
      }));
      expect(svgWidth).toBeGreaterThan(frameWidth);
      expect(level).toBe("65%");
    });

    it("fits a small loop to its frame, still readable", async () => {
      await page.goto(pathToFileURL(await output(["manifests/examples/listener.loop.yaml"], "html")).href);
      const fits = await page.evaluate(() => {
        const svg = document.querySelector("figure svg")!.getBoundingClientRect();
        const figure = document.querySelector("figure")!;
        return svg.width <= figure.clientWidth && svg.height <= figure.clientHeight;
      });
      expect(fits).toBe(true);
      expect(await labelHeight()).toBeGreaterThanOrEqual(9);
    });

    it("zooms with its buttons and Ctrl+wheel, and pans by dragging", async () => {
      await page.goto(pathToFileURL(await output(["manifests/"], "html")).href);
      const before = await labelHeight();
      await page.click("#zoom-in");
      expect((await labelHeight()) / before).toBeCloseTo(1.25, 1);
      await page.click("#zoom-reset");
      expect(await page.evaluate(() => document.getElementById("zoom-level").value)).toBe("100%");
      const box = (await page.locator("figure").boundingBox())!;
      await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
      await page.keyboard.down("Control");
      await page.mouse.wheel(0, 300);
      await page.keyboard.up("Control");
      const zoomedOut = await page.evaluate(() => document.getElementById("zoom-level").value);
      expect(Number.parseInt(zoomedOut)).toBeLessThan(100);
      const scrolled = () => page.evaluate(() => ({ left: document.querySelector("figure")!.scrollLeft, top: document.querySelector("figure")!.scrollTop }));
      await page.click("#zoom-reset");
      const start = await scrolled();
      await page.mouse.move(box.x + box.width - 40, box.y + box.height - 40);
      await page.mouse.down();
      await page.mouse.move(box.x + 40, box.y + 40, { steps: 8 });
      await page.mouse.up();
      const end = await scrolled();
      expect(end.left).toBeGreaterThan(start.left + 100);
      expect(end.top).toBeGreaterThan(start.top + 100);
    });
  });

  describe("closure arrows", () => {
    it.each([
      ["the shipped system", ["manifests/"]],
      ["Graphonomous with its nested deliberation loop", ["manifests/graphonomous.continual_learning.yaml", "manifests/graphonomous.deliberate.yaml"]],
      ["the spec's PRISM holding Graphonomous", ["test/fixtures/spec/prism.jsonc", "test/fixtures/spec/graphonomous.jsonc"]],
    ])("stay out of every loop box but their own and its ancestors': %s (PNG)", async (_, args) => {
      await showSvg(page, args);
      const closures = await page.evaluate(() => {
        const rect = (e: any) => {
          const r = e.getBoundingClientRect();
          return { x: r.x + scrollX, y: r.y + scrollY, width: r.width, height: r.height };
        };
        const clusters = [...document.querySelectorAll("g.cluster")].map((g: any) => ({ id: g.id, rect: rect(g.querySelector("path, polygon")!) }));
        const nodes = new Map([...document.querySelectorAll("g.node")].map((g: any) => [g.querySelector("title")!.textContent!, rect(g)]));
        const inside = (r: { x: number; y: number; width: number; height: number }, o: { x: number; y: number; width: number; height: number }) => r.x >= o.x && r.y >= o.y && r.x + r.width <= o.x + o.width && r.y + r.height <= o.y + o.height;
        return [...document.querySelectorAll("g.edge.closure")].map((g: any) => {
          const [from, to] = g.querySelector("title")!.textContent!.split("->").map((s: string) => nodes.get(s.trim())!);
          const owners = clusters.filter((c) => inside(from!, c.rect) && inside(to!, c.rect)).sort((a, b) => a.rect.width * a.rect.height - b.rect.width * b.rect.height);
          const owner = owners[0];
          const forbidden = clusters.filter((c) => c !== owner && !(owner && inside(owner.rect, c.rect))).map((c) => c.rect);
          return { id: g.id, forbidden };
        });
      });
      expect(closures.length).toBeGreaterThan(0);
      for (const { id, forbidden } of closures) {
        // Only this closure is drawn: every red pixel is its line, arrow or label.
        const image = await shot(page, `g.node, g.cluster, g.edge:not(#${id}) { visibility: hidden }`);
        const all = count(image, { x: 0, y: 0, width: image.width, height: image.height }, isRed);
        expect(all, `${id} is drawn`).toBeGreaterThan(50);
        for (const box of forbidden) expect(count(image, shrink(box, 3), isRed), `${id} crosses the loop box at ${JSON.stringify(box)}`).toBe(0);
      }
    }, 120_000); // one screenshot per closure: the shipped system has many, and a loaded machine renders slowly
  });

  it("cadence labels stay inside their shape, clear of its point (PNG)", async () => {
    await showSvg(page, ["manifests/"]);
    const cadences = await page.evaluate(() =>
      [...document.querySelectorAll("g.node.cadence")].map((g: any) => {
        const shape = g.querySelector("polygon")!;
        const ctm = shape.getScreenCTM();
        const points = [...shape.points].map((p: any) => ({ x: p.x * ctm.a + ctm.e + scrollX, y: p.y * ctm.d + ctm.f + scrollY }));
        const xs = points.map((p) => p.x).sort((a, b) => a - b);
        const ys = points.map((p) => p.y);
        // The body ends where the point begins: the largest x but the tip's.
        const shoulder = [...new Set(xs.map((x) => Math.round(x)))].sort((a, b) => a - b).at(-2)!;
        return { id: g.id, left: xs[0]!, shoulder, top: Math.min(...ys), bottom: Math.max(...ys) };
      }),
    );
    expect(cadences.length).toBeGreaterThan(5);
    // Only the cadences' text, in black.
    const image = await shot(page, `g.edge, g.cluster, g.node:not(.cadence) { visibility: hidden } g.node.cadence polygon { visibility: hidden } g.node.cadence text { fill: #000 }`);
    for (const c of cadences) {
      const band = { x: c.left - 40, y: c.top, width: c.shoulder - c.left + 200, height: c.bottom - c.top };
      const text = count(image, band, isDark);
      expect(text, `${c.id} has text`).toBeGreaterThan(30);
      const outside = count(image, { x: c.shoulder - 2, y: c.top, width: 240, height: c.bottom - c.top }, isDark) + count(image, { x: c.left - 40, y: c.top, width: 42, height: c.bottom - c.top }, isDark);
      expect(outside, `${c.id}: text past the body of its shape`).toBe(0);
    }
  });

  it("the ring layout keeps the loop's title, drawn on the page (PNG)", async () => {
    await showSvg(page, ["manifests/prism.benchmark.yaml", "--layout", "ring"]);
    const title = await page.evaluate(() => {
      const text = [...document.querySelectorAll("svg > g > text")].find((t: any) => t.textContent === "prism.benchmark");
      if (!text) return undefined;
      const r = text.getBoundingClientRect();
      const svg = document.querySelector("svg")!.getBoundingClientRect();
      return { rect: { x: r.x + scrollX, y: r.y + scrollY, width: r.width, height: r.height }, inside: r.left >= svg.left && r.right <= svg.right && r.top >= svg.top && r.bottom <= svg.bottom, name: [...document.querySelectorAll("svg > g > text")].some((t: any) => t.textContent === "PRISM Benchmark Cycle") };
    });
    expect(title).toBeDefined();
    expect(title!.inside).toBe(true);
    expect(title!.name).toBe(true);
    const image = await shot(page, "/* the page as it is */");
    expect(count(image, title!.rect, isDark)).toBeGreaterThan(30);
  });
});
