/**
 * The agent's LLM entries as the Settings page edits them (the home's config.json: alias,
 * provider, model, base URL, key, temperature, max tokens, think), and a connectivity test. A key
 * is never sent back in full: the page sees its last four characters; an entry saved without a
 * new key keeps the one it had (matched by alias, or by the alias it had before a rename).
 */
import { chmodSync, existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { ChatLlm } from "../../../adapters/agents/llm/chat-llm.js";
import { homePaths, parseConfig, ConfigError, type LlmEntry } from "../../coding/agent/config.js";
import { StudioError } from "../studio.js";

export const maskKey = (key: string): string => (key.length <= 8 ? "••••" : `••••${key.slice(-4)}`);

type Shown = Omit<LlmEntry, "apiKey"> & { apiKey?: string; apiKeySet: boolean };

export class Settings {
  private readonly file: string;

  constructor(
    home: string,
    private readonly env: Readonly<Record<string, string | undefined>>,
  ) {
    this.file = homePaths(home).config;
  }

  private raw(): Record<string, unknown> {
    if (!existsSync(this.file)) return {};
    try {
      const v = JSON.parse(readFileSync(this.file, "utf8")) as unknown;
      return v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
    } catch (e) {
      throw new StudioError(500, "BAD_CONFIG", `${this.file}: ${(e as Error).message} (fix or remove the file)`);
    }
  }

  private entries(): LlmEntry[] {
    try {
      return parseConfig(this.raw(), this.file).llm;
    } catch (e) {
      if (e instanceof ConfigError) throw new StudioError(500, "BAD_CONFIG", e.message);
      throw e;
    }
  }

  view(): { file: string; llm: Shown[]; roles: Record<string, string | undefined> } {
    const raw = this.raw();
    const llm = this.entries().map(({ apiKey, ...e }) => ({ ...e, ...(apiKey ? { apiKey: maskKey(apiKey) } : {}), apiKeySet: Boolean(apiKey) }));
    return { file: this.file, llm, roles: (raw.roles ?? {}) as Record<string, string | undefined> };
  }

  /**
   * The entries from the page, each keeping its stored key unless it brings a new one (`apiKey`:
   * a new key; `""`: none; absent: keep the key of `was`, else of its alias).
   */
  private merged(given: unknown): LlmEntry[] {
    if (!Array.isArray(given)) throw new StudioError(400, "BAD_REQUEST", "llm must be a list of entries");
    const stored = new Map(this.entries().map((e) => [e.alias, e]));
    return given.map((raw, i) => {
      if (!raw || typeof raw !== "object" || Array.isArray(raw)) throw new StudioError(400, "BAD_REQUEST", `llm.${i}: an entry is an object`);
      const { was, apiKeySet: _s, ...e } = raw as Record<string, unknown>;
      const old = stored.get(typeof was === "string" ? was : String(e.alias));
      if (e.apiKey === undefined && old?.apiKey) e.apiKey = old.apiKey;
      if (e.apiKey === "" || e.apiKey === null) delete e.apiKey;
      if (typeof e.apiKey === "string" && e.apiKey.startsWith("••••")) throw new StudioError(400, "BAD_REQUEST", `llm.${i}.apiKey: that is the masked key; leave it out to keep the stored one`);
      for (const k of Object.keys(e)) if (e[k] === null || e[k] === "") delete e[k];
      return e as LlmEntry;
    });
  }

  save(body: { llm?: unknown; roles?: unknown }): ReturnType<Settings["view"]> {
    const raw = this.raw();
    const llm = this.merged(body.llm ?? []);
    // Roles follow an entry's rename when the page does not set them itself.
    const renamed = new Map((Array.isArray(body.llm) ? body.llm : []).flatMap((e: { was?: unknown; alias?: unknown }) => (typeof e?.was === "string" && typeof e.alias === "string" ? [[e.was, e.alias] as const] : [])));
    const roles = body.roles !== undefined ? body.roles : Object.fromEntries(Object.entries((raw.roles ?? {}) as Record<string, string>).map(([k, v]) => [k, renamed.get(v) ?? v]));
    const next = { ...raw, llm, roles };
    try {
      parseConfig(next, "config.json");
    } catch (e) {
      if (e instanceof ConfigError) throw new StudioError(422, "INVALID", e.message);
      throw e;
    }
    const tmp = `${this.file}.${process.pid}.tmp`;
    writeFileSync(tmp, `${JSON.stringify(next, null, 2)}\n`, { mode: 0o600 });
    chmodSync(tmp, 0o600);
    renameSync(tmp, this.file);
    return this.view();
  }

  /** One short completion against an entry (saved, or as edited on the page): whether it answers, how fast, and what. */
  async test(body: { alias?: unknown; entry?: unknown }): Promise<{ ok: boolean; ms: number; model?: string; reply?: string; error?: string }> {
    let entry: LlmEntry | undefined;
    if (body.entry !== undefined) {
      const [e] = this.merged([body.entry]);
      try {
        entry = parseConfig({ llm: [e] }, "entry").llm[0];
      } catch (err) {
        throw new StudioError(422, "INVALID", (err as Error).message);
      }
    } else entry = this.entries().find((e) => e.alias === body.alias);
    if (!entry) throw new StudioError(404, "NOT_FOUND", `no llm entry with the alias ${JSON.stringify(body.alias)}`);
    const started = Date.now();
    try {
      const llm = new ChatLlm({ ...entry, maxRetries: 0 }, this.env);
      const r = await llm.complete({ role: "connectivity-test", prompt: "Reply with the single word: pong", maxTokens: 16, timeoutMs: Math.min(entry.requestTimeoutMs ?? 15_000, 15_000) });
      return { ok: true, ms: Date.now() - started, reply: r.text.slice(0, 200), ...(r.model ? { model: r.model } : {}) };
    } catch (e) {
      return { ok: false, ms: Date.now() - started, error: (e as Error).message.slice(0, 500) };
    }
  }
}
