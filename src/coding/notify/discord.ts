/** Discord: a channel's webhook (JSON content); a thread of a forum channel with `?thread_id=ID` in its URL. */
import { textOf, type NotifierChannel } from "../notifier.js";
import { post } from "./http.js";

export function discordChannel(url: URL): NotifierChannel {
  const thread = url.searchParams.get("thread_id");
  return {
    name: `discord ${url.host}${thread ? ` thread ${thread}` : ""}`,
    send: (n, signal) => post("Discord", { url, headers: { "content-type": "application/json" }, body: JSON.stringify({ content: textOf(n).slice(0, 2000) }) }, signal),
  };
}
