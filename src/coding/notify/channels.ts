/**
 * A channel named as text (`telegram:CHAT_ID`, `sms:+15551234`, `discord:URL`, `slack:URL`,
 * `webhook:URL`, a bare http(s) URL, `desktop`): in `--notify`, the profile's `notify.channels`
 * and a REST/MCP start's `notify`. Secrets come from the environment only, never from the text
 * (a request could otherwise point pulse's credentials anywhere); base URLs from the environment
 * or the profile, so a test or a self-hosted gateway can stand in for the service.
 */
import { desktopChannel, webhookChannel, type NotifierChannel } from "../notifier.js";
import { discordChannel } from "./discord.js";
import { httpUrl } from "./http.js";
import { slackChannel } from "./slack.js";
import { PHONE, smsChannel } from "./sms.js";
import { TELEGRAM_CHAT, telegramChannel } from "./telegram.js";

export const CHANNEL_KINDS = ["telegram", "sms", "discord", "slack", "webhook", "desktop"] as const;
export type ChannelKind = (typeof CHANNEL_KINDS)[number];

/** The profile's settings of the channels that have any (never a secret). */
export interface ChannelSettings {
  telegram?: { apiBase?: string };
  sms?: { apiBase?: string; from?: string };
}

/** A channel text that cannot be used: `reason` says why in a few words. */
export class ChannelSpecError extends Error {
  constructor(
    readonly spec: string,
    readonly reason: string,
  ) {
    super(`${spec}: ${reason}`);
    this.name = "ChannelSpecError";
  }
}

export interface ChannelSpec {
  kind: ChannelKind;
  target: string;
}

/** The kind and target of a channel text, or a ChannelSpecError (wrong shape, unknown kind). */
export function parseChannelSpec(text: string): ChannelSpec {
  const spec = text.trim();
  if (/^https?:\/\//i.test(spec)) return { kind: "webhook", target: checkedUrl(text, spec).href };
  if (spec === "desktop") return { kind: "desktop", target: "" };
  const colon = spec.indexOf(":");
  if (colon < 0) throw new ChannelSpecError(text, `is not a channel: use telegram:CHAT_ID, sms:+NUMBER, discord:URL, slack:URL, webhook:URL, an https:// URL or desktop${hint(spec)}`);
  const kind = spec.slice(0, colon).toLowerCase();
  const target = spec.slice(colon + 1).trim();
  if (!(CHANNEL_KINDS as readonly string[]).includes(kind)) throw new ChannelSpecError(text, `unknown channel ${JSON.stringify(kind)} (one of ${CHANNEL_KINDS.join(", ")})${hint(kind)}`);
  const k = kind as ChannelKind;
  if (k === "desktop") throw new ChannelSpecError(text, "desktop takes nothing after it: --notify desktop");
  if (target === "") throw new ChannelSpecError(text, `${k} needs ${k === "telegram" ? "a chat id" : k === "sms" ? "a phone number" : "a URL"} after the colon`);
  if (k === "telegram" && !TELEGRAM_CHAT.test(target)) throw new ChannelSpecError(text, `a Telegram chat id is a number (e.g. 123456789 or -1001234567890) or a channel's @name, got ${JSON.stringify(target)}`);
  if (k === "sms" && !PHONE.test(target.replace(/[\s()-]/g, ""))) throw new ChannelSpecError(text, `an SMS number is international, + and country code first (e.g. +15551234567), got ${JSON.stringify(target)}`);
  if (k === "sms") return { kind: k, target: target.replace(/[\s()-]/g, "") };
  if (k === "telegram") return { kind: k, target };
  const url = checkedUrl(text, target);
  if (k === "discord" && url.searchParams.has("thread_id") && !/^\d+$/.test(url.searchParams.get("thread_id")!)) throw new ChannelSpecError(text, `a Discord thread_id is a number, got ${JSON.stringify(url.searchParams.get("thread_id"))}`);
  return { kind: k, target: url.href };
}

/** Builds the channel; a ChannelSpecError names the environment variable it lacks. */
export function channelOf(text: string, env: Readonly<Record<string, string | undefined>>, settings: ChannelSettings = {}): NotifierChannel {
  const { kind, target } = parseChannelSpec(text);
  const need = (...names: string[]) => {
    const missing = names.filter((n) => !env[n]);
    if (missing.length > 0) throw new ChannelSpecError(text, `needs ${missing.join(" and ")} in the environment`);
  };
  switch (kind) {
    case "telegram": {
      need("TELEGRAM_BOT_TOKEN");
      const apiBase = env.TELEGRAM_API_BASE || settings.telegram?.apiBase;
      return telegramChannel({ token: env.TELEGRAM_BOT_TOKEN!, chatId: target, ...(apiBase ? { apiBase: checkedUrl(text, apiBase).href } : {}) });
    }
    case "sms": {
      need("TWILIO_ACCOUNT_SID", "TWILIO_AUTH_TOKEN");
      const from = env.TWILIO_FROM || settings.sms?.from;
      if (!from) throw new ChannelSpecError(text, "needs TWILIO_FROM in the environment (or notify.sms.from in the profile): the number the SMS comes from");
      const apiBase = env.TWILIO_API_BASE || settings.sms?.apiBase;
      return smsChannel({ accountSid: env.TWILIO_ACCOUNT_SID!, authToken: env.TWILIO_AUTH_TOKEN!, from, to: target, ...(apiBase ? { apiBase: checkedUrl(text, apiBase).href } : {}) });
    }
    case "discord":
      return discordChannel(new URL(target));
    case "slack":
      return slackChannel(new URL(target));
    case "webhook":
      return webhookChannel(target);
    case "desktop":
      return desktopChannel();
  }
}

function checkedUrl(text: string, value: string): URL {
  const u = httpUrl(value);
  if (typeof u === "string") throw new ChannelSpecError(text, u);
  return u;
}

/** "; did you mean discord?" for a kind one or two letters off. */
function hint(word: string): string {
  const near = CHANNEL_KINDS.find((k) => distance(k, word.toLowerCase()) <= 2);
  return near && word !== "" ? `; did you mean ${near}:…?` : "";
}

function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cur = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = cur;
    }
  }
  return row[b.length]!;
}
