import { InProcessTransport } from "../../src/transports/in-process.js";
import { transportContract } from "./contract.js";

transportContract({
  name: "in-process",
  answersForReceiver: true,
  open: async () => {
    const transport = new InProcessTransport();
    return { transport, serve: async (loopId, receiver) => void transport.register(loopId, receiver), close: async () => undefined };
  },
});
