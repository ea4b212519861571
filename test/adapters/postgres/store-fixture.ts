/**
 * The PostgreSQL Store for the one contract suite (test/store/contract.test.ts): each test gets a
 * schema and two roles of its own, migrated by the server's superuser (an owner), while the store
 * connects as the runtime's role itself, under row-level security. Schemas are dropped after each
 * test; the last drops are awaited when the file ends.
 *
 * Where no PostgreSQL answers, the fixture is left out and the PostgreSQL store's own suite
 * (test/adapters/postgres/store.test.ts) reports the skip with its reason; under CI=true it stays
 * in and fails, naming the missing server.
 */
import { afterAll } from "vitest";
import { PostgresDatabase } from "../../../adapters/postgres/database.js";
import { migrate } from "../../../adapters/postgres/migrate.js";
import { PostgresStore } from "../../../adapters/postgres/store.js";
import type { Store } from "../../../src/store/contracts.js";
import { postgresService } from "../../helpers/services.js";
import { pgSchema } from "./helpers.js";

const service = await postgresService();
const drops: Promise<unknown>[] = [];
afterAll(() => Promise.all(drops));

function fixture(url: string) {
  const s = pgSchema(url);
  let migrated: Promise<unknown> | undefined;
  return {
    name: "postgres",
    open: (): Store => {
      migrated ??= migrate(s.url);
      return new PostgresStore(s.appUrl, migrated.then(() => PostgresDatabase.open(s.appUrl)));
    },
    reopen: async (store: Store): Promise<Store> => {
      await store.close();
      return PostgresStore.open(s.appUrl);
    },
    cleanup: () => void drops.push(s.drop()),
  };
}

export const postgresFixtures: (() => ReturnType<typeof fixture>)[] =
  service.url || process.env.CI === "true" ? [() => fixture(service.url ?? (process.env.DATABASE_URL || "postgresql://postgres@127.0.0.1:5432/test"))] : [];
