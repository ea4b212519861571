/** A local HTTP server standing in for a chat service: records each request, answers as told. */
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface SeenRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface FakeApi {
  url: string;
  requests: SeenRequest[];
  /** The statuses of the next answers (then 200). */
  answers: number[];
  close(): Promise<void>;
}

export async function fakeApi(answers: number[] = [], answerBody = '{"ok":true}'): Promise<FakeApi> {
  const requests: SeenRequest[] = [];
  const api = { requests, answers } as FakeApi;
  const server: Server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      requests.push({ method: req.method!, path: req.url!, headers: req.headers, body });
      res.statusCode = api.answers.shift() ?? 200;
      res.setHeader("content-type", "application/json");
      res.end(res.statusCode === 200 ? answerBody : '{"ok":false,"description":"try later"}');
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  api.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  api.close = () => new Promise<void>((r) => server.close(() => r()));
  return api;
}
