/**
 * Binds the URIs of a manifest's `substrates` map to implementations: scheme → factory, with
 * host overrides per slot or per URI (`graphonomous://…` can be bound to any adapter). The
 * embedded default binds http(s) URIs to the HTTP substrate client and every other scheme to
 * the in-memory adapters.
 */
import type { AuditSubstrate, AuthSubstrate, MemorySubstrate, PolicySubstrate, SubstrateSet, TimeSubstrate } from "./contracts.js";

export type SlotImplementation = {
  memory: MemorySubstrate;
  policy: PolicySubstrate;
  audit: AuditSubstrate;
  auth: AuthSubstrate;
  time: TimeSubstrate;
};

export type Slot = keyof SlotImplementation;

/** Creates the implementation of one slot for a substrate URI (`{ws_id}` left unexpanded). */
export type SubstrateFactory = <S extends Slot>(slot: S, uri: string) => SlotImplementation[S];

export class SubstrateRegistry {
  private readonly schemes = new Map<string, SubstrateFactory>();
  private readonly uris = new Map<string, Partial<SlotImplementation>>();
  private readonly slots: Partial<SlotImplementation> = {};
  private fallback: SubstrateFactory | undefined;
  private readonly instances = new Map<string, unknown>();

  /** Serve every URI of this scheme (e.g. "graphonomous") with the factory. */
  scheme(scheme: string, factory: SubstrateFactory): this {
    this.schemes.set(scheme.toLowerCase(), factory);
    return this;
  }

  /** Serve one exact URI with an implementation. */
  uri<S extends Slot>(uri: string, slot: S, implementation: SlotImplementation[S]): this {
    const entry = this.uris.get(uri) ?? {};
    entry[slot] = implementation;
    this.uris.set(uri, entry);
    return this;
  }

  /** Serve a slot with one implementation whatever the URI (tests, conformance recording). */
  slot<S extends Slot>(slot: S, implementation: SlotImplementation[S]): this {
    this.slots[slot] = implementation;
    return this;
  }

  /** Used when no scheme matches. */
  fallbackTo(factory: SubstrateFactory): this {
    this.fallback = factory;
    return this;
  }

  /** Whether URIs of this scheme have a factory of their own. */
  hasScheme(scheme: string): boolean {
    return this.schemes.has(scheme.toLowerCase());
  }

  get hasFallback(): boolean {
    return this.fallback !== undefined;
  }

  resolve<S extends Slot>(slot: S, uri: string): SlotImplementation[S] {
    const bySlot = this.slots[slot];
    if (bySlot) return bySlot as SlotImplementation[S];
    const byUri = this.uris.get(uri)?.[slot];
    if (byUri) return byUri as SlotImplementation[S];
    const key = `${slot} ${uri}`;
    const cached = this.instances.get(key);
    if (cached) return cached as SlotImplementation[S];
    const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(uri)?.[1]?.toLowerCase();
    const factory = (scheme && this.schemes.get(scheme)) || this.fallback;
    if (!factory) {
      throw new Error(`no substrate adapter for ${slot} "${uri}": register one with registry.scheme("${scheme ?? uri}", …) or registry.slot("${slot}", …)`);
    }
    const instance = factory(slot, uri);
    this.instances.set(key, instance);
    return instance;
  }

  /** The set a manifest's `substrates` map binds to. Required slots must be bound. */
  bind(substrates: Record<string, string | null | undefined>): SubstrateSet {
    // A null slot still needs an implementation (§3.4: memory, policy, audit and auth are
    // mandatory): it gets the fallback adapter under a placeholder URI.
    const uri = (slot: Slot) => (typeof substrates[slot] === "string" ? (substrates[slot] as string) : `${slot}:unbound`);
    const set: SubstrateSet = {
      memory: this.resolve("memory", uri("memory")),
      policy: this.resolve("policy", uri("policy")),
      audit: this.resolve("audit", uri("audit")),
      auth: this.resolve("auth", uri("auth")),
    };
    if (typeof substrates.time === "string" || this.slots.time) set.time = this.resolve("time", substrates.time ?? "time:unbound");
    return set;
  }
}
