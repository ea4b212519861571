/**
 * The online knowledge endpoints (knowledge.provider), over HTTP with a per-call timeout and a
 * cap on the answer's size:
 * - `custom_api`: `POST <baseUrl>` `{ query, k, index? }` → `{ entries: [{ name, description?, content, url? }] }`
 *   (seed 002's knowledge entry; a generic JSON search contract any service can serve);
 * - `web`: a SearXNG instance, `GET <baseUrl>/search?q=…&format=json` → `{ results: [{ title, url, content }] }`.
 * The key (when `apiKeyEnv` names a set variable) goes as `Authorization: Bearer`. Every failure is
 * an Error naming the endpoint and what was wrong; the caller decides what it costs.
 */
import type { OnlineConfig } from "../../../src/coding/agent/config.js";
import type { OnlineSearch } from "../../../src/coding/agent/retrieval/online.js";
import type { KnowledgeEntry } from "../../../src/coding/agent/types.js";

/** Answers larger than this are refused (the results are capped anyway; this bounds what is read). */
export const MAX_ANSWER_BYTES = 1024 * 1024;

export class HttpOnlineSearch implements OnlineSearch {
  readonly provider: string;
  readonly endpoint: string;

  constructor(
    private readonly config: OnlineConfig,
    private readonly env: Readonly<Record<string, string | undefined>>,
  ) {
    if (!config.baseUrl) throw new Error("knowledge.baseUrl: online knowledge needs a search endpoint");
    this.provider = config.provider;
    const root = config.baseUrl.replace(/\/+$/, "");
    this.endpoint = config.provider === "web" ? (root.endsWith("/search") ? root : `${root}/search`) : root;
  }

  async search(query: string, k: number, signal?: AbortSignal): Promise<KnowledgeEntry[]> {
    const timeout = AbortSignal.timeout(this.config.timeoutMs);
    const both = signal ? AbortSignal.any([signal, timeout]) : timeout;
    const key = this.config.apiKeyEnv ? this.env[this.config.apiKeyEnv] : undefined;
    const headers: Record<string, string> = { accept: "application/json", ...(key ? { authorization: `Bearer ${key}` } : {}) };
    let url = this.endpoint;
    let init: RequestInit;
    if (this.config.provider === "web") {
      const q = new URLSearchParams({ q: query, format: "json", ...(this.config.index ? { categories: this.config.index } : {}) });
      url = `${this.endpoint}?${q}`;
      init = { method: "GET", headers };
    } else {
      init = { method: "POST", headers: { ...headers, "content-type": "application/json" }, body: JSON.stringify({ query, k, ...(this.config.index ? { index: this.config.index } : {}) }) };
    }
    let text: string;
    try {
      const res = await fetch(url, { ...init, signal: both, redirect: "error" });
      text = await readCapped(res, this.endpoint);
      if (!res.ok) throw new Error(`${this.endpoint} answered HTTP ${res.status}: ${text.slice(0, 200)}`);
    } catch (e) {
      if (timeout.aborted && !signal?.aborted) throw new Error(`${this.endpoint} did not answer within ${this.config.timeoutMs} ms (knowledge.timeoutMs)`);
      if (signal?.aborted) throw e;
      const cause = (e as Error & { cause?: { code?: string } }).cause?.code;
      throw new Error((e as Error).message.startsWith(this.endpoint) ? (e as Error).message : `${this.endpoint}: ${cause ?? (e as Error).message}`);
    }
    return this.config.provider === "web" ? parseWeb(this.endpoint, text) : parseCustom(this.endpoint, text);
  }
}

async function readCapped(res: Response, endpoint: string): Promise<string> {
  const declared = Number(res.headers.get("content-length") ?? "0");
  if (declared > MAX_ANSWER_BYTES) throw new Error(`${endpoint} answered ${declared} bytes, more than the ${MAX_ANSWER_BYTES} read`);
  if (!res.body) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > MAX_ANSWER_BYTES) throw new Error(`${endpoint} answered more than ${MAX_ANSWER_BYTES} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

function json(endpoint: string, text: string): Record<string, unknown> {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw new Error(`${endpoint} answered something that is not JSON: ${JSON.stringify(text.slice(0, 120))}`);
  }
  if (!v || typeof v !== "object" || Array.isArray(v)) throw new Error(`${endpoint} answered JSON that is not an object`);
  return v as Record<string, unknown>;
}

const str = (v: unknown): v is string => typeof v === "string";

function parseCustom(endpoint: string, text: string): KnowledgeEntry[] {
  const v = json(endpoint, text);
  if (!Array.isArray(v.entries)) throw new Error(`${endpoint} answered without entries[] (the custom_api contract: { entries: [{ name, description?, content, url? }] })`);
  return v.entries.map((raw, i) => {
    const e = raw as Record<string, unknown>;
    if (!e || !str(e.name) || !str(e.content)) throw new Error(`${endpoint}: entries[${i}] needs name and content (strings)`);
    if (e.description !== undefined && !str(e.description)) throw new Error(`${endpoint}: entries[${i}].description must be a string`);
    if (e.url !== undefined && !str(e.url)) throw new Error(`${endpoint}: entries[${i}].url must be a string`);
    return { name: e.name, description: (e.description as string | undefined) ?? "", content: e.content, ...(e.url ? { url: e.url as string } : {}) };
  });
}

function parseWeb(endpoint: string, text: string): KnowledgeEntry[] {
  const v = json(endpoint, text);
  if (!Array.isArray(v.results)) throw new Error(`${endpoint} answered without results[] (a SearXNG JSON answer: { results: [{ title, url, content }] })`);
  return v.results.flatMap((raw) => {
    const r = raw as Record<string, unknown>;
    // Web results are uneven: one without a title or text says nothing and is left out.
    if (!r || !str(r.title) || !str(r.content)) return [];
    return [{ name: r.title, description: str(r.url) ? r.url : "", content: r.content, ...(str(r.url) ? { url: r.url } : {}) }];
  });
}
