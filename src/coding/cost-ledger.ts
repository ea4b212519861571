/**
 * The cost ledger: tokens and dollars per iteration, per session and per loop. A driver's own
 * figure is used when it reports one (claude, opencode); otherwise the price table prices the
 * tokens, and an unknown model is priced at the default rate, never at $0 (a loop that thinks it
 * spends nothing never hits its cap). Each entry is recorded as an `agent.usage` audit event.
 */
import type { Usage } from "../agents/contract.js";
import type { AuditSink } from "./audit-sink.js";

export interface Price {
  /** US dollars per million tokens. */
  input: number;
  output: number;
  cacheRead?: number;
  cacheWrite?: number;
}

export interface PriceTable {
  /** Exact model names or prefixes ending in `*`. */
  models: Record<string, Price>;
  /** For models the table does not know. */
  default: Price;
}

/** List prices (USD per million tokens) of common models; override or extend per loop. */
export const DEFAULT_PRICES: PriceTable = {
  models: {
    "claude-opus-4*": { input: 15, output: 75, cacheRead: 1.5, cacheWrite: 18.75 },
    "claude-sonnet-4*": { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
    "claude-haiku-4*": { input: 1, output: 5, cacheRead: 0.1, cacheWrite: 1.25 },
    "gpt-5*": { input: 1.25, output: 10, cacheRead: 0.125 },
    "gpt-4.1*": { input: 2, output: 8, cacheRead: 0.5 },
    "gpt-4o-mini*": { input: 0.15, output: 0.6, cacheRead: 0.075 },
    "gpt-4o*": { input: 2.5, output: 10, cacheRead: 1.25 },
    "gemini-2.5-pro*": { input: 1.25, output: 10, cacheRead: 0.31 },
    "gemini-2.5-flash*": { input: 0.3, output: 2.5, cacheRead: 0.075 },
  },
  // Deliberately not cheap: an unknown model is assumed to cost like a mid-range frontier one.
  default: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
};

export type CostSource = "driver" | "price_table" | "default_price";

export interface LedgerEntry {
  loopId: string;
  sessionId: string;
  iteration: number;
  driver: string;
  model?: string;
  usage: Usage;
  tokens: number;
  costUsd: number;
  costSource: CostSource;
}

export interface LedgerTotals {
  tokens: number;
  costUsd: number;
  calls: number;
}

export function priceOf(model: string | undefined, table: PriceTable = DEFAULT_PRICES): { price: Price; source: "price_table" | "default_price" } {
  if (model) {
    const exact = table.models[model];
    if (exact) return { price: exact, source: "price_table" };
    const prefix = Object.keys(table.models)
      .filter((k) => k.endsWith("*") && model.startsWith(k.slice(0, -1)))
      .sort((a, b) => b.length - a.length)[0];
    if (prefix) return { price: table.models[prefix]!, source: "price_table" };
  }
  return { price: table.default, source: "default_price" };
}

export function costOf(usage: Usage, price: Price): number {
  const cacheRead = usage.cacheReadTokens ?? 0;
  const cacheWrite = usage.cacheWriteTokens ?? 0;
  return (usage.inputTokens * price.input + usage.outputTokens * price.output + cacheRead * (price.cacheRead ?? price.input) + cacheWrite * (price.cacheWrite ?? price.input)) / 1_000_000;
}

export class CostLedger {
  private readonly entries: LedgerEntry[] = [];

  constructor(private readonly options: { prices?: PriceTable; audit?: AuditSink } = {}) {}

  /** Records one agent call. `costUsd` is the driver's own figure when it reported one. */
  /** Prices and keeps one call; `audit` (a phase's own sink) takes the `agent.usage` event instead of the ledger's. */
  async record(call: { loopId: string; sessionId: string; iteration: number; driver: string; model?: string; usage?: Usage; costUsd?: number }, audit: AuditSink | undefined = this.options.audit): Promise<LedgerEntry> {
    const usage = call.usage ?? { inputTokens: 0, outputTokens: 0 };
    let costUsd: number;
    let costSource: CostSource;
    if (call.costUsd !== undefined && Number.isFinite(call.costUsd) && (call.costUsd > 0 || tokensOf(usage) === 0)) {
      costUsd = call.costUsd;
      costSource = "driver";
    } else {
      // A driver saying $0 for real tokens (a proxy that does not price) is not believed.
      const { price, source } = priceOf(call.model, this.options.prices);
      costUsd = costOf(usage, price);
      costSource = source;
    }
    const entry: LedgerEntry = { loopId: call.loopId, sessionId: call.sessionId, iteration: call.iteration, driver: call.driver, usage, tokens: tokensOf(usage), costUsd, costSource, ...(call.model ? { model: call.model } : {}) };
    this.entries.push(entry);
    await audit?.("agent.usage", { ...entry, usage: { ...usage } } as unknown as Record<string, unknown>);
    return entry;
  }

  all(): readonly LedgerEntry[] {
    return this.entries;
  }

  total(filter: { loopId?: string; sessionId?: string; iteration?: number } = {}): LedgerTotals {
    const picked = this.entries.filter((e) => (filter.loopId === undefined || e.loopId === filter.loopId) && (filter.sessionId === undefined || e.sessionId === filter.sessionId) && (filter.iteration === undefined || e.iteration === filter.iteration));
    return { tokens: picked.reduce((n, e) => n + e.tokens, 0), costUsd: picked.reduce((n, e) => n + e.costUsd, 0), calls: picked.length };
  }

  /** Totals per key: "session" or "iteration" (within a session: `session#n`). */
  by(key: "session" | "iteration"): Map<string, LedgerTotals> {
    const out = new Map<string, LedgerTotals>();
    for (const e of this.entries) {
      const k = key === "session" ? e.sessionId : `${e.sessionId}#${e.iteration}`;
      const t = out.get(k) ?? { tokens: 0, costUsd: 0, calls: 0 };
      t.tokens += e.tokens;
      t.costUsd += e.costUsd;
      t.calls++;
      out.set(k, t);
    }
    return out;
  }
}

function tokensOf(u: Usage): number {
  return u.inputTokens + u.outputTokens + (u.cacheReadTokens ?? 0) + (u.cacheWriteTokens ?? 0);
}
