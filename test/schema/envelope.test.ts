/**
 * The §10.1 CloudEvents envelope: what a receiving loop can rely on before it looks at the token.
 */
import { CloudEvent } from "cloudevents";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { TOKEN_NAMES, type OutcomeSignal, type PulseCloudEvent } from "../../src/tokens/types.js";
import { ENVELOPE_SCHEMA_FILE, compile } from "./schemas.js";
import { EXAMPLES, TRACE_ID } from "./token-examples.js";

const validate = compile(ENVELOPE_SCHEMA_FILE);

/** The §10.1 example, with "abc123" kept as the spec writes it and the data completed. */
const event: PulseCloudEvent<OutcomeSignal> = {
  specversion: "1.0",
  type: "org.opensentience.pulse.OutcomeSignal",
  source: "loop:graphonomous.continual_learning/phase:learn_outcome",
  subject: "trace_id:abc123",
  id: "evt_xyz789",
  time: "2026-04-10T12:00:00Z",
  datacontenttype: "application/json",
  data: { ...EXAMPLES.OutcomeSignal, trace_id: "abc123" },
};

const TRACEPARENT = `00-${TRACE_ID}-00f067aa0ba902b7-01`;

function errorsOf(doc: unknown): Array<{ instancePath: string; keyword: string }> {
  validate(doc);
  return (validate.errors ?? []).map((e) => ({ instancePath: e.instancePath, keyword: e.keyword }));
}

describe("envelope: accepted", () => {
  it("the §10.1 example", () => {
    expect(errorsOf(event)).toEqual([]);
  });

  it.each([...TOKEN_NAMES])("an event carrying each token: %s", (token) => {
    const doc = { ...event, type: `org.opensentience.pulse.${token}`, data: EXAMPLES[token] };
    expect(errorsOf(doc)).toEqual([]);
  });

  it("the W3C traceparent extension, tracestate, dataschema and other lowercase extensions", () => {
    const doc = {
      ...event,
      traceparent: TRACEPARENT,
      tracestate: "congo=t61rcWkgMzE",
      dataschema: "https://opensentience.org/schemas/tokens/OutcomeSignal.v0.1.json",
      pulsesignature: "blake3:9f64a747e1b97f131fabb6b447296c9b6f0201e79fb3c5356e6c77e89b6a806a",
    };
    expect(errorsOf(doc)).toEqual([]);
  });

  it("what the cloudevents SDK serialises for a PULSE event", () => {
    const ce = new CloudEvent({ ...event, traceparent: TRACEPARENT });
    expect(errorsOf(JSON.parse(JSON.stringify(ce)))).toEqual([]);
  });

  it("any well-formed traceparent", () => {
    const hex = (n: number): fc.Arbitrary<string> =>
      fc.string({ unit: fc.constantFrom(..."0123456789abcdef"), minLength: n, maxLength: n });
    const traceparent = fc
      .tuple(hex(2), hex(32), hex(16), hex(2))
      .filter(([v, t, p]) => v !== "ff" && !/^0+$/.test(t) && !/^0+$/.test(p))
      .map((parts) => parts.join("-"));
    fc.assert(fc.property(traceparent, (tp) => validate({ ...event, traceparent: tp })));
  });
});

// [what is wrong, field, value just outside, value just inside, instancePath, keyword]
const nearMisses: Array<[string, string, unknown, unknown, string, string]> = [
  ["type from another namespace", "type", "com.example.pulse.OutcomeSignal", "org.opensentience.pulse.OutcomeSignal", "/type", "enum"],
  ["type with a snake_case token", "type", "org.opensentience.pulse.outcome_signal", "org.opensentience.pulse.OutcomeSignal", "/type", "enum"],
  ["type naming a non-canonical token", "type", "org.opensentience.pulse.EscalationRequest", "org.opensentience.pulse.OutcomeSignal", "/type", "enum"],
  ["source without prefixes", "source", "graphonomous.continual_learning/learn_outcome", "loop:graphonomous.continual_learning/phase:learn_outcome", "/source", "pattern"],
  ["source with a one-segment loop id", "source", "loop:graphonomous/phase:learn_outcome", "loop:graphonomous.cl/phase:learn_outcome", "/source", "pattern"],
  ["source with an uppercase phase id", "source", "loop:graphonomous.cl/phase:Learn", "loop:graphonomous.cl/phase:learn", "/source", "pattern"],
  ["source as a URL", "source", "https://graphonomous.example/loops/cl", "loop:graphonomous.cl/phase:learn", "/source", "pattern"],
  ["subject without trace_id:", "subject", "abc123", "trace_id:abc123", "/subject", "pattern"],
  ["CloudEvents 0.3", "specversion", "0.3", "1.0", "/specversion", "const"],
  ["non-JSON content type", "datacontenttype", "text/plain", "application/json", "/datacontenttype", "const"],
  ["time without a zone", "time", "2026-04-10T12:00:00", "2026-04-10T12:00:00.000Z", "/time", "format"],
  ["empty id", "id", "", "e", "/id", "minLength"],
  ["traceparent with an all-zero trace id", "traceparent", `00-${"0".repeat(32)}-00f067aa0ba902b7-01`, TRACEPARENT, "/traceparent", "pattern"],
  ["traceparent with an all-zero parent id", "traceparent", `00-${TRACE_ID}-${"0".repeat(16)}-01`, TRACEPARENT, "/traceparent", "pattern"],
  ["traceparent in uppercase", "traceparent", TRACEPARENT.toUpperCase(), TRACEPARENT, "/traceparent", "pattern"],
  ["traceparent with version ff", "traceparent", `ff-${TRACE_ID}-00f067aa0ba902b7-01`, `fe-${TRACE_ID}-00f067aa0ba902b7-01`, "/traceparent", "pattern"],
  ["traceparent without flags", "traceparent", `00-${TRACE_ID}-00f067aa0ba902b7`, TRACEPARENT, "/traceparent", "pattern"],
  ["data that is not an object", "data", "OutcomeSignal", event.data, "/data", "type"],
];

describe("envelope: rejected just outside, accepted just inside", () => {
  it.each(nearMisses)("%s", (_what, field, outside, inside, instancePath, keyword) => {
    expect(errorsOf({ ...event, [field]: outside })).toContainEqual({ instancePath, keyword });
    expect(errorsOf({ ...event, [field]: inside })).toEqual([]);
  });

  it.each(["specversion", "type", "source", "subject", "id", "time", "datacontenttype", "data"])("an event without %s", (field) => {
    const { [field]: _dropped, ...rest } = event;
    expect(errorsOf(rest)).toContainEqual({ instancePath: "", keyword: "required" });
  });

  it("data naming a different token than type", () => {
    const mismatched = { ...event, type: "org.opensentience.pulse.ReputationUpdate" };
    expect(errorsOf(mismatched)).toContainEqual({ instancePath: "/data/token", keyword: "const" });
    expect(errorsOf({ ...mismatched, data: EXAMPLES.ReputationUpdate })).toEqual([]);
  });

  it.each(["token", "version", "trace_id"])("data without %s", (field) => {
    const { [field]: _dropped, ...data } = event.data;
    expect(errorsOf({ ...event, data })).toContainEqual({ instancePath: "/data", keyword: "required" });
  });

  it("attribute names CloudEvents forbids (camelCase, underscores), while lowercase ones pass", () => {
    expect(errorsOf({ ...event, traceId: TRACE_ID })).toContainEqual({ instancePath: "", keyword: "propertyNames" });
    expect(errorsOf({ ...event, trace_id: TRACE_ID })).toContainEqual({ instancePath: "", keyword: "propertyNames" });
    expect(errorsOf({ ...event, traceid: TRACE_ID })).toEqual([]);
  });
});
