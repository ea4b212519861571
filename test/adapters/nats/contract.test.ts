import { describeWith, natsService } from "../../helpers/services.js";
import { transportContract } from "../../transports/contract.js";
import { natsSystem } from "./helpers.js";

describeWith(await natsService(), "NATS JetStream", (url) => {
  // Structured mode is what a sender sends by default; binary must keep working end to end.
  for (const mode of ["structured", "binary"] as const) {
    transportContract({
      name: `NATS JetStream (${mode} mode)`,
      answersForReceiver: false,
      open: async () => {
        const system = natsSystem(url);
        // Two connections, as two hosts would have: one sends, the other receives.
        const sender = await system.open({ mode });
        const receiving = await system.open();
        return { transport: sender, serve: (loopId, receiver) => receiving.receive(loopId, receiver), close: () => system.close() };
      },
    });
  }
});
