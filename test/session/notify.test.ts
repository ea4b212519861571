/**
 * Notifications of a real session (the built bin, a real git repository) reaching a local server
 * that speaks the service's API: `--notify` channels and the profile's; a channel that always
 * fails is said once per notification and the session still completes; a bad `--notify` or a
 * missing secret is a usage error before anything is recorded; a REST start names channels only
 * of the kinds the server's profile allows.
 */
import { startServe } from "./serve-process.js";
import { spawn, type ChildProcess } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { isolatedStore, ROOT, runBin } from "../cli/run-bin.js";
import { parseSessionProfile } from "../../src/coding/session/profile.js";
import { fakeApi, type FakeApi } from "../coding/fake-api.js";
import { gitRepo, removeDir, worktreesRoot } from "./helpers.js";

const BIN = join(ROOT, "dist/bin/pulse.mjs");
const dirs: string[] = [];
const apis: FakeApi[] = [];
const children: ChildProcess[] = [];
afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill("SIGKILL");
  for (const a of apis.splice(0)) await a.close();
  for (const d of dirs.splice(0)) removeDir(d);
});

const STEPS = [
  { match: { iteration: 1 }, files: { "a.js": "1\n" }, commit: "feat: a", text: "Wrote a.js. <signal>CONTINUE</signal>" },
  { match: { iteration: 2 }, text: "<signal>COMPLETE</signal>" },
];

function setup(profile?: unknown) {
  const repo = gitRepo();
  dirs.push(repo);
  const script = join(repo, ".git", "steps.json");
  writeFileSync(script, JSON.stringify({ steps: STEPS }));
  const store = join(repo, ".git", "pulse.db");
  const profilePath = join(repo, ".git", "profile.json");
  if (profile) writeFileSync(profilePath, JSON.stringify(profile));
  const base = { HOME: repo, PULSE_WORKTREES: worktreesRoot() };
  const profileArgs = profile ? ["--profile", profilePath] : [];
  return {
    repo,
    script,
    store,
    profileArgs,
    /** The bin, synchronously (refusals: no server has to answer meanwhile). */
    pulse: (args: string[], env: Record<string, string> = {}) => runBin("pulse", ["session", ...args, "--store", store, ...profileArgs], { cwd: repo, env: { ...base, ...env } }),
    /** The bin in the background, so the test's servers can answer it. */
    pulseAsync: (args: string[], env: Record<string, string> = {}) =>
      new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
        const child = spawn(process.execPath, [BIN, "session", ...args, "--store", store, ...profileArgs], { cwd: repo, env: { PATH: process.env.PATH ?? "", ...isolatedStore(), ...base, ...env } });
        children.push(child);
        let stdout = "";
        let stderr = "";
        child.stdout.on("data", (d) => (stdout += d));
        child.stderr.on("data", (d) => (stderr += d));
        child.on("close", (code) => resolve({ code, stdout, stderr }));
      }),
  };
}

const SHIPPED = JSON.parse((await import("node:fs")).readFileSync(join(ROOT, "profiles/coding/session.profile.json"), "utf8")) as { notify: object };
const withNotify = (notify: object) => ({ ...SHIPPED, $schema: undefined, notify: { ...SHIPPED.notify, ...notify } });

describe("notifications of a session (the bin)", () => {
  it("reach Telegram (--notify) and Slack (the profile's channels) in order; a dead Discord is said once per notification and the session completes", async () => {
    const telegram = await fakeApi();
    const slack = await fakeApi();
    const discord = await fakeApi(Array(30).fill(500));
    apis.push(telegram, slack, discord);
    const { script, pulseAsync } = setup(withNotify({ channels: [`slack:${slack.url}/services/T/B/X`], retryDelaysMs: [10, 20] }));
    const r = await pulseAsync(["start", "--goal", "notify me", "--driver", "scripted", "--script", script, "--notify", "telegram:123456789", "--notify", `discord:${discord.url}/api/webhooks/1/t?thread_id=7`], { TELEGRAM_BOT_TOKEN: "42:SECRET", TELEGRAM_API_BASE: telegram.url });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("complete after 2 iterations");
    const texts = telegram.requests.map((q) => JSON.parse(q.body).text as string);
    expect(texts).toEqual([expect.stringMatching(/^📍 Iteration 1\/10: Wrote a\.js\. Continuing\.\.\. \(pulse session [0-9a-f]{8}\)$/), expect.stringMatching(/^✅ Session complete \(2 iterations, 1 commit\)/)]);
    expect(telegram.requests.every((q) => q.path === "/bot42:SECRET/sendMessage" && JSON.parse(q.body).chat_id === "123456789")).toBe(true);
    expect(slack.requests.map((q) => JSON.parse(q.body).text)).toEqual(texts);
    // Two notifications, three tries each, one line each.
    expect(discord.requests).toHaveLength(6);
    expect(discord.requests[0]!.path).toBe("/api/webhooks/1/t?thread_id=7");
    const failures = r.stderr.split("\n").filter((l) => l.includes("notification through"));
    expect(failures).toEqual([expect.stringMatching(/^pulse session: notification through discord 127\.0\.0\.1:\d+ thread 7 failed: Discord answered HTTP 500.* \(3 tries\)$/), expect.stringContaining("thread 7 failed")]);
    expect(r.stderr).not.toContain("SECRET");
  }, 60_000);

  it("refuses a bad --notify or a missing secret in one line, exit 2, before any session is recorded; the near miss runs", async () => {
    const { script, pulse, pulseAsync } = setup();
    const start = ["start", "--goal", "x", "--driver", "scripted", "--script", script];
    const secrets = { TELEGRAM_BOT_TOKEN: "t", TWILIO_ACCOUNT_SID: "AC1", TWILIO_AUTH_TOKEN: "x", TWILIO_FROM: "+15550001111" };
    const cases: [string, Record<string, string>, RegExp][] = [
      ["telegram:abc", secrets, /^pulse session: --notify telegram:abc: a Telegram chat id is a number/],
      ["telegram:123456789", {}, /^pulse session: --notify telegram:123456789: needs TELEGRAM_BOT_TOKEN in the environment\n$/],
      ["sms:+15551234567", { TWILIO_ACCOUNT_SID: "AC1" }, /--notify sms:\+15551234567: needs TWILIO_AUTH_TOKEN in the environment/],
      ["sms:5551234567", secrets, /--notify sms:5551234567: an SMS number is international/],
      ["discrod:https://discord.com/api/webhooks/1/x", secrets, /unknown channel "discrod".*did you mean discord/],
      ["slack:hooks.slack.com/services/x", secrets, /--notify slack:hooks\.slack\.com\/services\/x: is not a URL/],
      ["ftp://example.org/x", secrets, /--notify ftp:\/\/example\.org\/x: unknown channel "ftp"/],
    ];
    for (const [spec, env, message] of cases) {
      const r = pulse([...start, "--notify", spec], env);
      expect(r.code, `${spec}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
      expect(pulse(["list"]).stdout).toBe("no sessions\n");
    }
    expect(pulse(["resume", "00000000", "--notify", "telegram:1"]).stderr).toBe("pulse session: --notify telegram:1: needs TELEGRAM_BOT_TOKEN in the environment\n");
    // The near miss: the same channel with its secret.
    const telegram = await fakeApi();
    apis.push(telegram);
    const ok = await pulseAsync([...start, "--notify", "telegram:123456789"], { TELEGRAM_BOT_TOKEN: "t", TELEGRAM_API_BASE: telegram.url });
    expect(ok.code, ok.stderr).toBe(0);
    expect(telegram.requests).toHaveLength(2);
    expect(JSON.parse(pulse(["list", "--json"]).stdout)).toHaveLength(1);
  }, 90_000);
});

describe("a REST start naming channels", () => {
  async function serve(repo: string, profilePath: string, env: Record<string, string>) {
    const served = await startServe(repo, ["--listen", "0", "--store", join(repo, ".git", "pulse.db"), "--profile", profilePath, "--allow-scripts", join(repo, ".git")], env);
    children.push(served.child);
    return served;
  }

  it("is refused 403 for a kind the profile does not allow, accepted for one it does, with the server's secrets", async () => {
    const telegram = await fakeApi();
    apis.push(telegram);
    const { repo, script } = setup();
    const profilePath = join(repo, ".git", "profile.json");
    writeFileSync(profilePath, JSON.stringify(withNotify({ allowFromRequests: ["telegram"] })));
    const { url } = await serve(repo, profilePath, { TELEGRAM_BOT_TOKEN: "9:SERVER", TELEGRAM_API_BASE: telegram.url });
    const start = async (body: object) => {
      const res = await fetch(`${url}/api/pulse/start`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ goal: "x", repo, driver: "scripted", script, ...body }) });
      return { status: res.status, body: (await res.json()) as any };
    };
    const slack = await start({ notify: ["slack:https://hooks.slack.com/services/T/B/X"] });
    expect(slack.status).toBe(403);
    expect(slack.body.error).toMatchObject({ code: "FORBIDDEN", field: "notify" });
    expect(slack.body.error.message).toMatch(/slack channels are not allowed from requests by this server .*notify\.allowFromRequests: telegram/);
    const bad = await start({ notify: "telegram:1" });
    expect([bad.status, bad.body.error.field]).toEqual([400, "notify"]);
    expect(((await (await fetch(`${url}/api/pulse`)).json()) as { sessions: unknown[] }).sessions).toEqual([]);
    // The near miss: an allowed kind, its token the server's own.
    const ok = await start({ notify: ["telegram:555"] });
    expect(ok.status, JSON.stringify(ok.body)).toBe(201);
    const end = Date.now() + 20_000;
    while (telegram.requests.length < 2 && Date.now() < end) await new Promise((r) => setTimeout(r, 100));
    expect(telegram.requests.map((q) => [q.path, JSON.parse(q.body).chat_id])).toEqual([
      ["/bot9:SERVER/sendMessage", "555"],
      ["/bot9:SERVER/sendMessage", "555"],
    ]);
    expect(JSON.parse(telegram.requests[1]!.body).text).toMatch(/Session complete/);
  }, 60_000);
});

describe("the profile's notify settings", () => {
  it("are refused naming the field, and the near miss is taken", () => {
    expect(() => parseSessionProfile(withNotify({ allowFromRequests: ["telegarm"] }), "p.json")).toThrow(/^p\.json: \/notify\/allowFromRequests\/0 must be equal to one of the allowed values \(one of "telegram", "sms"/);
    expect(() => parseSessionProfile(withNotify({ sms: { from: "5550001111" } }), "p.json")).toThrow(/\/notify\/sms\/from must match pattern/);
    expect(() => parseSessionProfile(withNotify({ telegram: { token: "x" } }), "p.json")).toThrow(/"token" is not a setting of this loop/);
    const ok = parseSessionProfile(withNotify({ allowFromRequests: ["telegram"], sms: { from: "+15550001111" }, channels: ["desktop"] }));
    expect(ok.notify).toMatchObject({ allowFromRequests: ["telegram"], sms: { from: "+15550001111" }, channels: ["desktop"], terminal: true });
    expect(parseSessionProfile(SHIPPED).notify).toMatchObject({ channels: [], allowFromRequests: [] });
  });

  it("a profile channel without its secret stops pulse serve as a usage error, in one line", () => {
    const { repo } = setup();
    const profilePath = join(repo, ".git", "profile.json");
    writeFileSync(profilePath, JSON.stringify(withNotify({ channels: ["telegram:123456789"] })));
    const r = runBin("pulse", ["serve", "--listen", "0", "--store", join(repo, ".git", "pulse.db"), "--profile", profilePath], { cwd: repo, env: { HOME: repo } });
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toBe("pulse: notify.channels in the profile telegram:123456789: needs TELEGRAM_BOT_TOKEN in the environment");
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
  });
});
