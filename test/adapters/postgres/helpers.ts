/** PostgreSQL suites: a schema and two roles of their own (a run id in their names), dropped after. */
import pg from "pg";
import { runId } from "../../helpers/services.js";

export interface PgSchema {
  schema: string;
  /** The store URL as an owner (the server's superuser) gives it: ?schema=… */
  url: string;
  /** The same database, connected as the runtime's role itself. */
  appUrl: string;
  appRole: string;
  ownerRole: string;
  /** A query as the superuser. */
  admin(sql: string, params?: unknown[]): Promise<pg.QueryResult>;
  drop(): Promise<void>;
}

export function pgSchema(baseUrl: string): PgSchema {
  const schema = `pulse_${runId("t")}`;
  const base = new URL(baseUrl);
  const url = new URL(baseUrl);
  url.searchParams.set("schema", schema);
  const app = new URL(baseUrl);
  app.username = `${schema}_app`;
  app.password = "";
  app.searchParams.set("schema", schema);
  const admin = async (sql: string, params: unknown[] = []) => {
    const c = new pg.Client({ connectionString: base.toString() });
    await c.connect();
    try {
      return await c.query(sql, params);
    } finally {
      await c.end();
    }
  };
  return {
    schema,
    url: url.toString(),
    appUrl: app.toString(),
    appRole: `${schema}_app`,
    ownerRole: `${schema}_owner`,
    admin,
    drop: async () => {
      await admin(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      for (const role of [`${schema}_app`, `${schema}_owner`]) {
        const exists = await admin("SELECT 1 FROM pg_roles WHERE rolname = $1", [role]);
        if (exists.rowCount === 0) continue;
        await admin(`DROP OWNED BY "${role}" CASCADE`);
        await admin(`DROP ROLE "${role}"`);
      }
    },
  };
}

/** A client connected as `url`, for raw SQL. */
export async function clientAs(url: string): Promise<pg.Client> {
  const u = new URL(url);
  u.searchParams.delete("schema");
  const c = new pg.Client({ connectionString: u.toString() });
  await c.connect();
  return c;
}
