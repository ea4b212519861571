/**
 * Each notification channel against a local server that speaks its API: the exact request
 * (method, path, body fields, content type, auth); retries after a 5xx, none after a 4xx; a
 * channel that always fails is said once per notification and never throws; channel texts
 * (`--notify` values) refused with the reason, and their near misses accepted.
 */
import { afterEach, describe, expect, it } from "vitest";
import { Notifier, type Notification } from "../../src/coding/notifier.js";
import { channelOf, parseChannelSpec } from "../../src/coding/notify/channels.js";
import { fakeApi, type FakeApi } from "./fake-api.js";

const apis: FakeApi[] = [];
afterEach(async () => {
  for (const a of apis.splice(0)) await a.close();
});
async function api(answers: number[] = []): Promise<FakeApi> {
  const a = await fakeApi(answers);
  apis.push(a);
  return a;
}

const NOTE: Notification = { kind: "complete", message: "Session complete (2 iterations, 1 commit)", sessionId: "0123456789abcdef" };
const TEXT = "✅ Session complete (2 iterations, 1 commit) (pulse session 01234567)";

async function deliver(spec: string, env: Record<string, string>, settings = {}): Promise<string[]> {
  const errors: string[] = [];
  const n = new Notifier([channelOf(spec, env, settings)], { retryDelaysMs: [], onError: (c, e) => errors.push(`${c}: ${e.message}`) });
  n.notify(NOTE);
  await n.flush();
  return errors;
}

describe("notification channels against their APIs", () => {
  it("Telegram: POST {base}/bot<TOKEN>/sendMessage with chat_id and text as JSON", async () => {
    const a = await api();
    expect(await deliver("telegram:-1001234567890", { TELEGRAM_BOT_TOKEN: "123:ABC", TELEGRAM_API_BASE: a.url })).toEqual([]);
    expect(a.requests).toHaveLength(1);
    const r = a.requests[0]!;
    expect([r.method, r.path, r.headers["content-type"]]).toEqual(["POST", "/bot123:ABC/sendMessage", "application/json"]);
    expect(JSON.parse(r.body)).toEqual({ chat_id: "-1001234567890", text: TEXT });
    // The base from the profile when the environment has none.
    const b = await api();
    expect(await deliver("telegram:@pulse_news", { TELEGRAM_BOT_TOKEN: "t" }, { telegram: { apiBase: `${b.url}/tg/` } })).toEqual([]);
    expect(b.requests[0]!.path).toBe("/tg/bott/sendMessage");
  });

  it("SMS: the Twilio Messages API, form-encoded To/From/Body with basic auth", async () => {
    const a = await api();
    const env = { TWILIO_ACCOUNT_SID: "AC123", TWILIO_AUTH_TOKEN: "secret", TWILIO_FROM: "+15550001111", TWILIO_API_BASE: a.url };
    expect(await deliver("sms:+1 (555) 123-4567", env)).toEqual([]);
    const r = a.requests[0]!;
    expect([r.method, r.path, r.headers["content-type"]]).toEqual(["POST", "/2010-04-01/Accounts/AC123/Messages.json", "application/x-www-form-urlencoded"]);
    expect(r.headers.authorization).toBe(`Basic ${Buffer.from("AC123:secret").toString("base64")}`);
    expect(Object.fromEntries(new URLSearchParams(r.body))).toEqual({ To: "+15551234567", From: "+15550001111", Body: TEXT });
    // From the profile when TWILIO_FROM is not set.
    const b = await api();
    const { TWILIO_FROM: _, ...noFrom } = { ...env, TWILIO_API_BASE: b.url };
    expect(await deliver("sms:+447700900123", noFrom, { sms: { from: "+15559998888" } })).toEqual([]);
    expect(new URLSearchParams(b.requests[0]!.body).get("From")).toBe("+15559998888");
  });

  it("Discord: the webhook URL with JSON content, a thread kept in ?thread_id=", async () => {
    const a = await api();
    expect(await deliver(`discord:${a.url}/api/webhooks/1/tok?thread_id=42`, {})).toEqual([]);
    const r = a.requests[0]!;
    expect([r.method, r.path, r.headers["content-type"]]).toEqual(["POST", "/api/webhooks/1/tok?thread_id=42", "application/json"]);
    expect(JSON.parse(r.body)).toEqual({ content: TEXT });
  });

  it("Slack: the incoming webhook with JSON text; the generic webhook gets the notification itself", async () => {
    const a = await api();
    expect(await deliver(`slack:${a.url}/services/T/B/X`, {})).toEqual([]);
    expect([a.requests[0]!.method, a.requests[0]!.path, a.requests[0]!.headers["content-type"]]).toEqual(["POST", "/services/T/B/X", "application/json"]);
    expect(JSON.parse(a.requests[0]!.body)).toEqual({ text: TEXT });
    expect(await deliver(`webhook:${a.url}/hook`, {})).toEqual([]);
    expect(await deliver(`${a.url}/bare`, {})).toEqual([]);
    for (const r of a.requests.slice(1)) expect(JSON.parse(r.body)).toMatchObject({ kind: "complete", message: NOTE.message, text: NOTE.message, sessionId: NOTE.sessionId });
    expect(a.requests.map((r) => r.path)).toEqual(["/services/T/B/X", "/hook", "/bare"]);
  });
});

describe("delivery", () => {
  it("retries after a 500 and delivers; never retries a 4xx; an always failing channel is said once per notification", async () => {
    const a = await api([500]);
    const errors: string[] = [];
    const onError = (c: string, e: Error) => errors.push(`${c}: ${e.message}`);
    const n = new Notifier([channelOf(`slack:${a.url}/s`, {})], { retryDelaysMs: [50, 200], onError });
    n.notify(NOTE);
    expect(a.requests).toEqual([]); // queued: nothing is sent in the caller's time
    await n.flush();
    expect(errors).toEqual([]);
    expect(a.requests).toHaveLength(2);

    const refused = await api([401, 401, 401]);
    const r = new Notifier([channelOf(`discord:${refused.url}/d`, {})], { retryDelaysMs: [10, 10], onError });
    r.notify(NOTE);
    await r.flush();
    const dead = await api([500, 500, 500, 500, 500, 500]);
    const d = new Notifier([channelOf(`telegram:42`, { TELEGRAM_BOT_TOKEN: "SECRET-TOKEN", TELEGRAM_API_BASE: dead.url })], { retryDelaysMs: [10, 10], onError });
    d.notify(NOTE);
    d.notify({ kind: "info", message: "second", sessionId: "s" });
    await d.flush();
    expect(refused.requests).toHaveLength(1);
    expect(dead.requests).toHaveLength(6);
    expect(errors).toEqual([
      expect.stringMatching(/^discord 127\.0\.0\.1:\d+: Discord answered HTTP 401/),
      'telegram chat 42: Telegram answered HTTP 500: {"ok":false,"description":"try later"} (3 tries)',
      'telegram chat 42: Telegram answered HTTP 500: {"ok":false,"description":"try later"} (3 tries)',
    ]);
    expect(errors.join("\n")).not.toContain("SECRET-TOKEN");
  });

  it("flush waits at most its bound, then says what was not delivered", async () => {
    const errors: string[] = [];
    const hanging = { name: "slow", send: (_n: Notification, signal: AbortSignal) => new Promise<void>((_r, reject) => signal.addEventListener("abort", () => reject(signal.reason))) };
    const n = new Notifier([hanging], { timeoutMs: 60_000, onError: (c, e) => errors.push(`${c}: ${e.message}`) });
    n.notify(NOTE);
    n.notify(NOTE);
    const t0 = Date.now();
    await n.flush(300);
    expect(Date.now() - t0).toBeLessThan(1000);
    expect(errors).toEqual(["slow: 1 notification not delivered within 300 ms of shutting down"]);
  });
});

describe("channel texts", () => {
  const env = { TELEGRAM_BOT_TOKEN: "t", TWILIO_ACCOUNT_SID: "AC1", TWILIO_AUTH_TOKEN: "x", TWILIO_FROM: "+15550001111" };
  it.each([
    ["telegram:", /telegram needs a chat id/],
    ["telegram:abc", /a Telegram chat id is a number/],
    ["sms:5551234567", /international, \+ and country code first/],
    ["discrod:https://discord.com/api/webhooks/1/x", /unknown channel "discrod".*did you mean discord/],
    ["slack:hooks.slack.com/x", /is not a URL/],
    ["webhook:ftp://example.org/x", /must be an http/],
    ["discord:https://discord.com/api/webhooks/1/x?thread_id=abc", /thread_id is a number/],
    ["example.org/hook", /is not a channel/],
    ["desktop:now", /desktop takes nothing/],
  ])("refuses %s", (spec, reason) => {
    expect(() => channelOf(spec, env)).toThrow(reason);
  });

  it.each(["telegram:123456789", "telegram:-1001234567890", "telegram:@pulse_news", "sms:+15551234567", "discord:https://discord.com/api/webhooks/1/x?thread_id=99", "slack:https://hooks.slack.com/services/T/B/X", "webhook:http://127.0.0.1:9/x", "https://example.org/hook", "desktop", "TELEGRAM:1"])("accepts %s", (spec) => {
    expect(channelOf(spec, env).name).toBeTruthy();
  });

  it("names the missing secret, and a secret never comes from the text", () => {
    expect(() => channelOf("telegram:1", {})).toThrow("telegram:1: needs TELEGRAM_BOT_TOKEN in the environment");
    expect(() => channelOf("sms:+15551234567", { TWILIO_ACCOUNT_SID: "AC1" })).toThrow("needs TWILIO_AUTH_TOKEN in the environment");
    expect(() => channelOf("sms:+15551234567", { TWILIO_ACCOUNT_SID: "AC1", TWILIO_AUTH_TOKEN: "x" })).toThrow(/needs TWILIO_FROM/);
    expect(parseChannelSpec("https://example.org/h")).toEqual({ kind: "webhook", target: "https://example.org/h" });
  });
});
