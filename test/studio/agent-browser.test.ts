/**
 * Seed 002's Studio pages as a user sees them, in real headless Chromium against a real `pulse
 * studio` process, an agent home (examples/agent/home, no model configured) and a loopback
 * stand-in for the model's API: an LLM entry added and its connectivity tested from Settings, an
 * action created from the template and edited (validation, preview), then run in a new thread
 * with an attached file: its plan, live progress, result and the file it wrote; then the page
 * reloaded, the thread and its run still there. Screenshots go to a temporary directory, or to
 * docs/studio/ with PULSE_STUDIO_SCREENSHOTS=1.
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeWhen } from "../helpers/requires.js";
import { ROOT } from "../cli/run-bin.js";
import { startModelApi, type ModelApi } from "../agent/support/model-api.js";
import { startStudio, type Studio } from "./studio-process.js";

const CHROMIUM = "/usr/bin/chromium";
const FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];
const SHOTS = process.env.PULSE_STUDIO_SCREENSHOTS ? join(ROOT, "docs/studio") : mkdtempSync(join(tmpdir(), "pulse-studio-shots-"));
const SECRET = "sk-browser-secret-98765";

const SHOUT = `import { writeFileSync } from "node:fs";
import { join } from "node:path";

// Writes the text in capitals to shout.txt in the thread's working directory.
export class Perform {
  constructor(agent) {
    this.agent = agent;
  }

  async run({ text }) {
    writeFileSync(join(this.agent.workdir, "shout.txt"), text.toUpperCase() + "\\n");
    this.agent.log("shouted", { length: text.length });
    return { status: "ok", result: \`Wrote \${text.toUpperCase()} to shout.txt\` };
  }
}
`;

describeWhen(existsSync(CHROMIUM), `${CHROMIUM} (Debian's chromium package) to load the studio`)("pulse studio's agent pages in Chromium", () => {
  let browser: Browser;
  let page: Page;
  let studio: Studio;
  let model: ModelApi;
  let home: string;
  let root: string;
  let attachment: string;

  beforeAll(async () => {
    model = await startModelApi();
    const base = mkdtempSync(join(tmpdir(), "pulse-studio-agent-page-"));
    home = join(base, "home");
    cpSync(join(ROOT, "examples/agent/home"), home, { recursive: true });
    writeFileSync(join(home, "config.json"), "{}\n");
    root = join(base, "work");
    mkdirSync(root);
    attachment = join(base, "brief.txt");
    writeFileSync(attachment, "Say hello loudly.\n");
    mkdirSync(SHOTS, { recursive: true });
    studio = await startStudio(base, ["--store", "memory:", "--no-kickoff", "--agent-home", home, "--root", root]);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS });
    page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    page.setDefaultTimeout(10_000);
    page.on("pageerror", (e) => console.error("PAGE ERROR", e.message));
    page.on("console", (m) => m.type() === "error" && console.error("CONSOLE", m.text()));
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    expect(await studio?.stop()).toBe(0);
    await model?.close();
  }, 30_000);

  it("adds an LLM entry in Settings, tests its connectivity, and never shows its key back", async () => {
    await page.goto(`${studio.url}/#/agent/settings`);
    await page.locator("#add-entry").click();
    const entry = page.locator(".llm-entry").last();
    await entry.locator('[data-field="alias"]').fill("local");
    await entry.locator('[data-field="baseUrl"]').fill(`${model.url}/v1`);
    await entry.locator('[data-field="model"]').fill("mock-1");
    await entry.locator('[data-field="apiKey"]').fill(SECRET);
    model.replies.push({ content: "pong" });
    await entry.locator(".test-entry").click();
    await entry.locator('.test-result[data-test-result="ok"]').waitFor();
    expect(await entry.locator(".test-result").textContent()).toMatch(/connected in \d+ ms \(mock-1\): "pong"/);
    expect(model.chat.at(-1)!.headers.authorization).toBe(`Bearer ${SECRET}`);
    await page.locator("#save-settings").click();
    await expect.poll(() => page.locator("#settings-message").textContent()).toContain("saved to");
    expect(JSON.parse(readFileSync(join(home, "config.json"), "utf8")).llm[0]).toMatchObject({ alias: "local", model: "mock-1", apiKey: SECRET });
    expect(await page.content()).not.toContain(SECRET);
    expect(await page.locator('.llm-entry [data-field="apiKey"]').getAttribute("placeholder")).toContain("••••8765");
    // A refused connection says so, on the entry.
    await page.locator("#add-entry").click();
    const down = page.locator(".llm-entry").last();
    await down.locator('[data-field="alias"]').fill("down");
    await down.locator('[data-field="baseUrl"]').fill("http://127.0.0.1:9/v1");
    await down.locator('[data-field="model"]').fill("m");
    await down.locator(".test-entry").click();
    await down.locator('.test-result[data-test-result="failed"]').waitFor();
    await page.screenshot({ path: join(SHOTS, "agent-settings.png"), fullPage: true });
    await down.locator(".remove-entry").click();
  });

  it("creates an action from the template, shows validation errors and a preview while it is edited, and saves it", async () => {
    await page.locator("#nav-actions").click();
    await page.locator("#new-name").fill("shout");
    await page.locator("#create-from-template").click();
    await page.locator('#validation[data-valid="true"]').waitFor();
    expect(await page.locator("#preview").textContent()).toContain("shout");
    const meta = page.locator('textarea[data-file="meta.json"]');
    const good = await meta.inputValue();
    await meta.fill(good.replace('"string"', '"str"'));
    await page.locator('#validation[data-valid="false"]').waitFor();
    expect(await page.locator("#validation").textContent()).toMatch(/type must be one of/);
    await meta.fill(good.replace("Echo a text back (made from the template: edit perform.js)", "Write a text in capitals to shout.txt"));
    await page.locator('textarea[data-file="perform.js"]').fill(SHOUT);
    await page.locator('#validation[data-valid="true"]').waitFor();
    await page.locator("#save-resource").click();
    await expect.poll(() => page.locator("#manager-message").textContent()).toBe("saved actions/shout");
    expect(readFileSync(join(home, "actions", "shout", "perform.js"), "utf8")).toBe(SHOUT);
    // The list is read again after the save: waited for, not read at once.
    await expect.poll(() => page.locator('#resources li[data-name="shout"]').textContent()).toContain("Write a text in capitals");
    await page.screenshot({ path: join(SHOTS, "agent-actions.png"), fullPage: true });
  });

  it("runs the new action in a thread with an attached file: plan, live progress, result, the file it wrote; the thread is fixed once started", async () => {
    await page.locator("#new-thread").click();
    await page.locator("#new-workdir").waitFor();
    expect(await page.locator("#new-workdir").inputValue()).toBe(root);
    for (const box of await page.locator("#thread-actions input").all()) if ((await box.getAttribute("value")) !== "shout") await box.uncheck();
    await page.locator("#new-title").fill("Shouting");
    await page.locator("#create-thread").click();
    await page.locator("#ask-text").waitFor();
    expect(await page.locator("#thread-workdir").isDisabled()).toBe(false);
    model.replies.push({ content: JSON.stringify({ steps: [{ id: "s1", desc: "shout hello into a file" }] }) }, { delayMs: 600, content: JSON.stringify({ type: "execute", action: { name: "shout", args: { text: "hello" } }, step: "s1", reason: "the plan's one step" }) });
    await page.locator("#ask-text").fill("Shout hello");
    await page.locator("#ask-files").setInputFiles(attachment);
    expect(await page.locator("#ask-chosen").textContent()).toContain("1 file(s)");
    await page.locator("#ask-send").click();
    // Live: the plan shows while the decider is still thinking.
    await page.locator('#plan li[data-step="s1"]').waitFor();
    await page.locator('#run-status .status[data-status="succeeded"]').waitFor({ timeout: 20_000 });
    expect(await page.locator('#plan li[data-step="s1"]').getAttribute("data-status")).toBe("done");
    expect(await page.locator("#progress").textContent()).toContain("action shout → ok: Wrote HELLO to shout.txt");
    expect(await page.locator("#task").textContent()).toBe("Shout hello");
    await page.locator('#run-files a[data-file="shout.txt"]').click();
    await expect.poll(() => page.locator("#file-preview").textContent()).toContain("HELLO");
    expect(readFileSync(join(root, "shout.txt"), "utf8")).toBe("HELLO\n");
    expect(await page.locator("#chat .msg.user").textContent()).toContain("files: ");
    expect(await page.locator("#status-bar").textContent()).toMatch(/run succeeded \(goal_achieved\)/);
    expect(await page.locator("#thread-workdir").isDisabled()).toBe(true);
    expect(await page.locator("#fixed-note").textContent()).toContain("fixed since");
    // The model got the attached file's path in the planner's prompt.
    expect(JSON.stringify(model.chat.at(-2)!.body)).toContain("brief.txt");
    await page.screenshot({ path: join(SHOTS, "agent-working.png"), fullPage: true });
  });

  it("brings the thread and its run back on reload", async () => {
    await page.reload();
    await page.locator('#run-status .status[data-status="succeeded"]').waitFor();
    expect(await page.locator("#thread-title").textContent()).toBe("Shouting");
    expect(await page.locator("#threads").textContent()).toContain("Shouting");
    expect(await page.locator("#chat .msg").count()).toBe(2);
  });
});
