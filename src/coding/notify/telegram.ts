/** Telegram: the Bot API's sendMessage (`POST {base}/bot<TOKEN>/sendMessage`, JSON chat_id and text). */
import { textOf, type NotifierChannel } from "../notifier.js";
import { post } from "./http.js";

export const TELEGRAM_API = "https://api.telegram.org";

/** A chat id: a number (groups and channels are negative) or a public channel's @username. */
export const TELEGRAM_CHAT = /^(-?\d{1,20}|@[A-Za-z][A-Za-z0-9_]{4,31})$/;

export function telegramChannel(options: { token: string; chatId: string; apiBase?: string }): NotifierChannel {
  const url = new URL(`${(options.apiBase ?? TELEGRAM_API).replace(/\/+$/, "")}/bot${options.token}/sendMessage`);
  return {
    name: `telegram chat ${options.chatId}`,
    send: (n, signal) => post("Telegram", { url, headers: { "content-type": "application/json" }, body: JSON.stringify({ chat_id: options.chatId, text: textOf(n).slice(0, 4096) }) }, signal),
  };
}
