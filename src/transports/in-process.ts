/** Signals between loops of one process: a direct call into the receiving host. */
import type { Ack, SignalReceiver, Transport } from "../connections/contracts.js";
import type { PulseCloudEvent } from "../tokens/types.js";

export class InProcessTransport implements Transport {
  private readonly receivers = new Map<string, SignalReceiver>();

  register(loopId: string, receiver: SignalReceiver): () => void {
    this.receivers.set(loopId, receiver);
    return () => {
      if (this.receivers.get(loopId) === receiver) this.receivers.delete(loopId);
    };
  }

  // Not async: the receiver's own promise is handed back as it is, not wrapped in another (a
  // promise and two microtask turns per signal, bench/signals.bench.ts).
  send(envelope: PulseCloudEvent, toLoop: string): Promise<Ack> {
    const receiver = this.receivers.get(toLoop);
    if (!receiver) return Promise.resolve({ outcome: "rejected", reason: `no loop ${toLoop} is registered in this process` });
    try {
      return receiver.receive(envelope);
    } catch (error) {
      return Promise.reject(error);
    }
  }
}
