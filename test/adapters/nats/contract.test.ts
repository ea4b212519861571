import { describeWith, natsService } from "../../helpers/services.js";
import { transportContract } from "../../transports/contract.js";
import { natsSystem } from "./helpers.js";

describeWith(await natsService(), "NATS JetStream", (url) => {
  transportContract({
    name: "NATS JetStream",
    answersForReceiver: false,
    open: async () => {
      const system = natsSystem(url);
      // Two connections, as two hosts would have: one sends, the other receives.
      const sender = await system.open();
      const receiving = await system.open();
      return { transport: sender, serve: (loopId, receiver) => receiving.receive(loopId, receiver), close: () => system.close() };
    },
  });
});
