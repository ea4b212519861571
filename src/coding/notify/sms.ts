/**
 * SMS through the Twilio-compatible Messages API: `POST {base}/2010-04-01/Accounts/{SID}/Messages.json`,
 * form-encoded To, From and Body, basic auth with the account SID and auth token.
 */
import { textOf, type NotifierChannel } from "../notifier.js";
import { post } from "./http.js";

export const TWILIO_API = "https://api.twilio.com";

/** An E.164 number: +, country code, up to 15 digits. */
export const PHONE = /^\+[1-9]\d{6,14}$/;

export function smsChannel(options: { accountSid: string; authToken: string; from: string; to: string; apiBase?: string }): NotifierChannel {
  const url = new URL(`${(options.apiBase ?? TWILIO_API).replace(/\/+$/, "")}/2010-04-01/Accounts/${encodeURIComponent(options.accountSid)}/Messages.json`);
  const auth = `Basic ${Buffer.from(`${options.accountSid}:${options.authToken}`).toString("base64")}`;
  return {
    name: `sms ${options.to}`,
    // An SMS is paid per 160-character segment: one line, cut to three segments at most.
    send: (n, signal) => post("the SMS API", { url, headers: { "content-type": "application/x-www-form-urlencoded", authorization: auth }, body: new URLSearchParams({ To: options.to, From: options.from, Body: textOf(n).slice(0, 480) }).toString() }, signal),
  };
}
