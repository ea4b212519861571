/**
 * The audit chain's hash (src/store/audit-chain.ts) is over the canonical JSON of an event's
 * §9.3 fields, which the stores write directly for speed: it must be byte for byte what the
 * canonical JSON writer makes of those fields, for any event, or two stores would chain the same
 * events differently and `pulse audit verify` would disagree with them.
 */
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { canonicalJson } from "../../src/json/canonical-json.js";
import { initSignatures } from "../../src/runtime/signature.js";
import { chainHash, eventCanonical, GENESIS } from "../../src/store/audit-chain.js";
import type { AuditEvent } from "../../src/substrates/contracts.js";

beforeAll(() => initSignatures());

const text = fc.string({ unit: fc.constantFrom("a", "é", "\"", "\\", "\n", "\u0001", "😀", "z", " ") });
const event = fc.record(
  {
    event_id: text,
    event_type: text,
    trace_id: text,
    loop_id: text,
    phase_id: fc.option(text, { nil: null }),
    workspace_id: text,
    timestamp: text,
    signature: text,
    seq: fc.oneof(fc.nat(), fc.double({ noNaN: true, noDefaultInfinity: true })),
    data: fc.dictionary(text, fc.jsonValue()),
  },
  { requiredKeys: ["event_id", "event_type", "trace_id", "loop_id", "phase_id", "workspace_id", "timestamp", "signature", "seq"] },
) as fc.Arbitrary<AuditEvent>;

describe("audit chain", () => {
  it("writes an event's canonical JSON exactly as the canonical writer does, extra fields left out", () => {
    fc.assert(
      fc.property(event, (e) => {
        const { event_id, event_type, trace_id, loop_id, phase_id, workspace_id, timestamp, signature, seq, data } = e;
        const expected = canonicalJson({ event_id, event_type, trace_id, loop_id, phase_id, workspace_id, timestamp, signature, seq, ...(data === undefined ? {} : { data }) });
        expect(eventCanonical({ ...e, extra: 1 } as AuditEvent)).toBe(expected);
        expect(chainHash(GENESIS, e)).toBe(chainHash(GENESIS, e, expected));
      }),
      { numRuns: 300 },
    );
  });

  it("hashes a different event, or the same one after another head, differently", () => {
    const e: AuditEvent = { event_id: "t-0", event_type: "phase.completed", trace_id: "t", loop_id: "l", phase_id: null, workspace_id: "w", timestamp: "2026-11-24T12:00:00.000Z", signature: "blake3:ab", seq: 0 };
    expect(chainHash(GENESIS, e)).toBe(chainHash(GENESIS, { ...e }));
    expect(chainHash(GENESIS, { ...e, seq: 1 })).not.toBe(chainHash(GENESIS, e));
    expect(chainHash(chainHash(GENESIS, e), e)).not.toBe(chainHash(GENESIS, e));
  });
});
