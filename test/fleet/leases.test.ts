import { InMemoryLeases } from "../../adapters/memory/leases.js";
import { migrate, PostgresDatabase, PostgresLeases } from "../../adapters/postgres/index.js";
import { describeWith, postgresService } from "../helpers/services.js";
import { pgSchema } from "../adapters/postgres/helpers.js";
import { leaseContract } from "./lease-contract.js";

leaseContract({
  name: "in memory",
  open: async () => {
    let now = Date.UTC(2026, 3, 10);
    return { leases: new InMemoryLeases(() => now), wait: async (ms) => void (now += ms), close: async () => undefined };
  },
});

describeWith(await postgresService(), "PostgreSQL leases", (url) => {
  leaseContract({
    name: "PostgreSQL",
    open: async () => {
      const s = pgSchema(url);
      await migrate(s.url);
      const db = await PostgresDatabase.open(s.url);
      return {
        leases: new PostgresLeases(db),
        wait: (ms) => new Promise((r) => setTimeout(r, ms)),
        close: async () => {
          await db.close();
          await s.drop();
        },
      };
    },
  });
});
