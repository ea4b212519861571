/**
 * Plays the harness's PhaseScripts (driver protocol) as phase handlers of our runtime: every
 * substrate call goes through the phase's bound substrates, so the runtime's own machinery
 * (transactions, trace ids, circuit breakers) is what the harness observes.
 */
import type { PhaseScript } from "../../driver/protocol.js";
import type { PhaseContext, PhaseHandler } from "../../../src/runtime/index.js";

export function scriptedHandler(script: PhaseScript, counters: Map<string, number>): PhaseHandler {
  return async (ctx: PhaseContext) => {
    const key = `${ctx.loop_id} ${ctx.phase.id} ${ctx.workspace_id}`;
    const invocation = (counters.get(key) ?? 0) + 1;
    counters.set(key, invocation);
    const fill = (value: unknown) => substitute(value, ctx.input, invocation, ctx.trace_id);
    const calls = script.calls ?? [];
    for (const call of calls.filter((c) => !c.after_delay)) await invoke(ctx, call, fill);
    if (script.delay_ms) await ctx.clock.sleep(script.delay_ms, ctx.signal);
    for (const call of calls.filter((c) => c.after_delay)) await invoke(ctx, call, fill);
    if (invocation <= (script.fail_times ?? 0)) throw new Error(`scripted failure ${invocation} of ${script.fail_times}`);
    if (script.outputs && script.outputs.length > 0) return fill(script.outputs[Math.min(invocation, script.outputs.length) - 1]);
    return fill(script.output ?? {});
  };
}

async function invoke(ctx: PhaseContext, call: NonNullable<PhaseScript["calls"]>[number], fill: (v: unknown) => unknown): Promise<void> {
  const slot = (ctx.substrates as unknown as Record<string, Record<string, (args: unknown) => Promise<unknown>> | undefined>)[call.slot];
  const op = slot?.[call.operation];
  if (typeof op !== "function") throw new Error(`script: no substrate operation ${call.slot}.${call.operation}`);
  await op.call(slot, fill(call.args));
}

/**
 * "$input", "$input.<field>", "$trace" and "$invocation" in strings of a JSON value. A string that
 * is exactly one placeholder takes the value as is (an object, a number); inside a longer string
 * the value is spliced in as text ("node-$invocation").
 */
export function substitute(value: unknown, input: unknown, invocation: number, trace: string): unknown {
  if (typeof value === "string") {
    const whole = /^\$(input(?:\.[A-Za-z0-9_]+)?|invocation|trace)$/.exec(value);
    if (whole) return placeholder(whole[1]!, input, invocation, trace);
    return value.replace(/\$(input(?:\.[A-Za-z0-9_]+)?|invocation|trace)/g, (_, name: string) => {
      const v = placeholder(name, input, invocation, trace);
      return typeof v === "string" ? v : JSON.stringify(v);
    });
  }
  if (Array.isArray(value)) return value.map((v) => substitute(v, input, invocation, trace));
  if (value !== null && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substitute(v, input, invocation, trace)]));
  return value;
}

function placeholder(name: string, input: unknown, invocation: number, trace: string): unknown {
  if (name === "invocation") return invocation;
  if (name === "trace") return trace;
  if (name === "input") return input ?? null;
  return (input as Record<string, unknown> | null)?.[name.slice("input.".length)] ?? null;
}
