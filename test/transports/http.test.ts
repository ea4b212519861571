import { createSignalServer, HttpTransport } from "../../src/transports/http.js";
import type { SignalReceiver } from "../../src/connections/contracts.js";
import { transportContract } from "./contract.js";

transportContract({
  name: "HTTP (CloudEvents binary mode)",
  answersForReceiver: true,
  open: async () => {
    const receivers = new Map<string, SignalReceiver>();
    const server = createSignalServer(async (loopId, envelope) => {
      const receiver = receivers.get(loopId);
      return receiver ? receiver.receive(envelope as never) : { outcome: "rejected", reason: `no loop ${loopId}` };
    });
    const { url } = await server.listen(0);
    const routes: Record<string, string> = {};
    const transport = new HttpTransport({ routes, mode: "binary", timeoutMs: 5_000 });
    return {
      transport,
      serve: async (loopId, receiver) => {
        receivers.set(loopId, receiver);
        routes[loopId] = url;
      },
      close: async () => {
        await transport.close();
        server.server.closeAllConnections();
        await server.close();
      },
    };
  },
});
