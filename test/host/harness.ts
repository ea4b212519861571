/** A host on virtual time whose loops are small manifests built for each test. */
import { createHost, type HostEvent, type HostOptions } from "../../src/host/index.js";
import { VirtualClock, type PhaseHandler } from "../../src/runtime/index.js";
import { baseManifest } from "../helpers/manifests.js";
import { validHandlers } from "../runtime/harness.js";

export function loopManifest(id: string, mutate: (m: Record<string, any>) => void = () => {}): Record<string, any> {
  const m = baseManifest();
  m.loop_id = id;
  mutate(m);
  return m;
}

export async function hostOn(options: Omit<HostOptions, "clock"> = {}, handlers: Record<string, PhaseHandler> = validHandlers()) {
  const clock = new VirtualClock(Date.UTC(2026, 3, 10));
  const host = await createHost({ clock, ...options });
  for (const [kind, h] of Object.entries(handlers)) host.runtime.handleKind(kind, h);
  const events: HostEvent[] = [];
  host.subscribe((e) => events.push(e));
  const finished = (loopId?: string) => events.filter((e): e is Extract<HostEvent, { type: "iteration.finished" }> => e.type === "iteration.finished" && (!loopId || e.loop_id === loopId));
  return { host, clock, events, finished };
}
