/** Slack: an incoming webhook (JSON text). */
import { textOf, type NotifierChannel } from "../notifier.js";
import { post } from "./http.js";

export function slackChannel(url: URL): NotifierChannel {
  return {
    name: `slack ${url.host}`,
    send: (n, signal) => post("Slack", { url, headers: { "content-type": "application/json" }, body: JSON.stringify({ text: textOf(n) }) }, signal),
  };
}
