/**
 * The HTML page: self-contained (no script, no network), with the SVG, a legend, a table per
 * loop and the Mermaid source; and it renders in a real browser (headless Chromium).
 */
import { describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { toMermaid } from "../../src/diagram/mermaid.js";
import { diagram, graphOf } from "./helpers.js";
import { decodePng } from "./png.js";
import { itWhen } from "../helpers/requires.js";

const CHROMIUM = "/usr/bin/chromium";
const hasChromium = existsSync(CHROMIUM);

const unescapeHtml = (s: string) => s.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, "&");

async function page(args: string[]): Promise<{ file: string; html: string }> {
  const file = join(mkdtempSync(join(tmpdir(), "pulse-html-")), "diagram.html");
  const r = await diagram([...args, "-o", file]);
  expect(r.code).toBe(0);
  return { file, html: readFileSync(file, "utf8") };
}

describe("the HTML page", () => {
  it("is one self-contained file: inline SVG, one inline script allowed by its hash alone, nothing fetched from anywhere", async () => {
    const { html } = await page(["manifests/"]);
    expect(html.startsWith("<!doctype html>\n")).toBe(true);
    const scripts = [...html.matchAll(/<script\b[^>]*>([\s\S]*?)<\/script>/gi)];
    expect(scripts).toHaveLength(1);
    expect(scripts[0]![0]).toMatch(/^<script>/);
    const hash = createHash("sha256").update(scripts[0]![1]!).digest("base64");
    expect(html).toContain(`<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'sha256-${hash}'">`);
    expect(html).not.toMatch(/<link|<iframe|<object|<embed|@import|\beval\(|fetch\(|XMLHttpRequest/i);
    // Every src/href is a fragment or data: URL, never a network or file reference.
    const refs = [...html.matchAll(/\b(?:src|href|xlink:href)="([^"]*)"/g)].map((m) => m[1]!);
    expect(refs.filter((r) => !r.startsWith("#") && !r.startsWith("data:"))).toEqual([]);
    expect(html.match(/<svg\b/g)).toHaveLength(1);
    expect(html).not.toContain("<?xml");
  });

  it("has a legend, each loop's phases, cadence, invariants and connections, and the Mermaid source", async () => {
    const { html } = await page(["manifests/"]);
    const graph = await graphOf(["manifests/"]);
    expect(html).toContain("<h2>Legend</h2>");
    for (const kind of ["retrieve", "route", "act", "learn", "consolidate", "custom: compose"]) expect(html).toContain(`${kind}</li>`);
    for (const loop of graph.loops) expect(html).toContain(`<h2><code>${loop.loopId}</code>`);
    expect(html).toContain("<th>cadence</th><td>event: agent_query</td>");
    expect(html).toContain("<th>fallback</th><td>idle: after 1m</td>");
    expect(html).toContain("<td>0</td><td><code>retrieve_ctx</code></td>");
    expect(html).toContain("Compute κ; route to act or deliberate.");
    expect(html).toContain('<td class="off">· <code>quorum_before_commit</code></td>');
    expect(html).toContain("<td><code>outcome_to_prism</code></td>");
    const source = /<pre><code>([\s\S]*?)<\/code><\/pre>/.exec(html)![1]!;
    expect(unescapeHtml(source)).toBe(toMermaid(graph));
  });

  it("lists dangling references, and escapes manifest text", async () => {
    const { html } = await page(["test/fixtures/spec/graphonomous.jsonc", "test/fixtures/spec/prism.jsonc"]);
    expect(html).toContain('<span class="dangling">1 dangling reference</span>');
    expect(html).toContain("<code>/connections/0/to_phase</code>: phase <code>observe_judgments</code> of <code>prism.benchmark</code> not found");
    const dir = mkdtempSync(join(tmpdir(), "pulse-html-"));
    const hostile = readFileSync("manifests/examples/hello.loop.yaml", "utf8").replace("loop_name: Hello loop", `loop_name: "<script>alert('x')</script> & \\"q\\""`);
    const r = await diagram(["-", "--stdin-filename", "h.yaml", "--format", "html"], { stdin: hostile, cwd: dir });
    expect(r.code).toBe(0);
    // The manifest's text never becomes markup: the page's own script is the only one.
    expect(r.stdout.match(/<script>/g)).toHaveLength(1);
    expect(r.stdout).not.toContain("<script>alert");
    expect(r.stdout).toContain("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;");
  });

  itWhen(hasChromium, `${CHROMIUM} (Debian's chromium package) to render the page`)("renders in headless Chromium: a full-size, colourful screenshot with the diagram's fills", async () => {
    const { file } = await page(["manifests/"]);
    const dir = mkdtempSync(join(tmpdir(), "pulse-chromium-"));
    const png = join(dir, "page.png");
    const r = spawnSync(
      CHROMIUM,
      [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        `--user-data-dir=${join(dir, "profile")}`,
        `--screenshot=${png}`,
        "--window-size=1280,900",
        pathToFileURL(file).href,
      ],
      { encoding: "utf8", timeout: 60_000 },
    );
    expect(existsSync(png), `chromium exited ${r.status}: ${r.stderr.slice(-500)}`).toBe(true);
    const image = decodePng(readFileSync(png));
    rmSync(dir, { recursive: true, force: true });
    expect([image.width, image.height]).toEqual([1280, 900]);
    const colours = new Map<number, number>();
    let inked = 0;
    for (let i = 0; i < image.rgba.length; i += 4) {
      const [red, green, blue] = [image.rgba[i]!, image.rgba[i + 1]!, image.rgba[i + 2]!];
      const key = (red << 16) | (green << 8) | blue;
      colours.set(key, (colours.get(key) ?? 0) + 1);
      if (red < 230 || green < 230 || blue < 230) inked++;
    }
    expect(colours.size).toBeGreaterThan(200);
    expect(inked / (image.width * image.height)).toBeGreaterThan(0.05);
    // Phase fills from the SVG (retrieve, route) and the page header are on screen.
    for (const hex of [0x8cc2e0, 0xd1c28c, 0x0f172a]) expect(colours.get(hex) ?? 0, hex.toString(16)).toBeGreaterThan(20);
  });
});
