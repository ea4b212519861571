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

  async send(envelope: PulseCloudEvent, toLoop: string): Promise<Ack> {
    const receiver = this.receivers.get(toLoop);
    if (!receiver) return { outcome: "rejected", reason: `no loop ${toLoop} is registered in this process` };
    return receiver.receive(envelope);
  }
}
