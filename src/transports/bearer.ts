/**
 * Bearer tokens of pulse's listeners (`pulse substrate serve`, `pulse serve`): the check, in
 * constant time, and the 401 that says what to send.
 */
import { timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";

export function bearerAuthorized(req: IncomingMessage, token: string): boolean {
  const given = /^Bearer (.+)$/i.exec(req.headers.authorization ?? "")?.[1] ?? "";
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

export function refuseUnauthorized(res: ServerResponse): void {
  const body = JSON.stringify({ error: { code: "UNAUTHORIZED", message: 'send "Authorization: Bearer <token>" with the token the server was started with' } });
  res.writeHead(401, { "content-type": "application/json; charset=utf-8", "www-authenticate": "Bearer", "content-length": Buffer.byteLength(body) });
  res.end(body);
}
