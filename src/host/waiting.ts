/**
 * What the loops of a host wait for: their armed cadences with their next firing when scheduled
 * (a periodic tick, an idle period), and what only the outside can trigger (events, signals,
 * manual triggers). A stopped loop waits for nothing. `pulse run` says it when it goes quiet.
 */
import type { Loop } from "../runtime/loop.js";
import type { CadenceDriver } from "./cadence/driver.js";

/** What a loop of a host waits for (see Host.waiting). */
export interface HostWait {
  loop_id: string;
  /** In words: "periodic tick (every 1h)", "event \"agent_query\"", "a signal from a.loop". */
  for: string;
  /** When it is due, if the host has it scheduled. */
  due?: number;
  /** Whether the host fires it itself (a timer, a stream), rather than waiting for the outside. */
  armed: boolean;
}

export function waitsOf(hosted: Iterable<{ loop: Loop; drivers: CadenceDriver[]; outside: string[] }>): HostWait[] {
  const out: HostWait[] = [];
  for (const h of hosted) {
    if (h.loop.status() === "stopped") continue;
    for (const d of h.drivers) {
      const w = d.waiting();
      if (w) out.push({ loop_id: h.loop.id, ...w, armed: true });
    }
    for (const what of h.outside) out.push({ loop_id: h.loop.id, for: what, armed: false });
  }
  return out;
}
