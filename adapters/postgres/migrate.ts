/**
 * `pulse store migrate --store postgres://…`: creates (or brings up to date) the store's schema
 * and its two roles, run with an owner's credentials: a superuser, or a role with CREATEROLE and
 * CREATE on the database. One transaction, serialised per schema by an advisory lock, so hosts
 * that migrate at the same moment neither collide nor half-apply.
 */
import pg from "pg";
import { parsePostgresUrl, type PostgresAddress } from "./address.js";
import { migrations, SCHEMA_VERSION } from "./schema.js";
import { PostgresStoreError, describePgError } from "./errors.js";
import { migrateSessions } from "./session-schema.js";
import { migrateWorkflows } from "./workflow-schema.js";
import { migrateRuns } from "./run-schema.js";

export interface MigrateReport {
  schema: string;
  from: number;
  to: number;
  /** Roles this run created (an existing role is left as it is, after checking it is safe). */
  rolesCreated: string[];
  ownerRole: string;
  appRole: string;
  /** Who ran it. */
  connectedAs: string;
  /** The coding sessions' tables, on their own version track (session-schema.ts). */
  sessions: { from: number; to: number };
  /** The pulsing workflow's tables, on their own version track (workflow-schema.ts). */
  workflows: { from: number; to: number };
  runs: { from: number; to: number };
}

/** The schema version a store's database holds (0: none yet). */
export async function schemaVersion(client: pg.ClientBase, schema: string): Promise<number> {
  const exists = await client.query("SELECT to_regclass($1) IS NOT NULL AS present", [`"${schema}".meta`]);
  if (!exists.rows[0]?.present) return 0;
  const row = await client.query(`SELECT value FROM "${schema}".meta WHERE key = 'schema_version'`);
  return Number(row.rows[0]?.value ?? 0);
}

export function tooNew(address: PostgresAddress, version: number): PostgresStoreError {
  return new PostgresStoreError("STORE_TOO_NEW", `schema ${address.schema} at ${address.display} was written by a newer pulse (store schema version ${version}); this pulse reads store schema versions up to ${SCHEMA_VERSION}: upgrade pulse, or use another schema`);
}

export async function migrate(url: string, options: { appPassword?: string } = {}): Promise<MigrateReport> {
  const address = parsePostgresUrl(url);
  const client = new pg.Client({ connectionString: address.connectionString });
  try {
    await client.connect();
  } catch (error) {
    throw new PostgresStoreError("STORE_UNAVAILABLE", `cannot connect to PostgreSQL at ${address.display}: ${describePgError(error)}`);
  }
  const { schema, ownerRole, appRole } = address;
  try {
    await client.query("BEGIN");
    await client.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`pulse schema ${schema}`]);
    const me = (await client.query("SELECT current_user AS name, rolsuper AS super FROM pg_roles WHERE rolname = current_user")).rows[0] as { name: string; super: boolean };
    const rolesCreated: string[] = [];
    const role = async (name: string, attributes: string) => {
      const found = (await client.query("SELECT rolsuper, rolbypassrls FROM pg_roles WHERE rolname = $1", [name])).rows[0] as { rolsuper: boolean; rolbypassrls: boolean } | undefined;
      if (!found) {
        await client.query(`CREATE ROLE "${name}" ${attributes}`);
        rolesCreated.push(name);
      } else if (name === appRole && (found.rolsuper || found.rolbypassrls)) {
        throw new PostgresStoreError("STORE_UNSAFE_ROLE", `role ${name} exists and can bypass row-level security (${found.rolsuper ? "SUPERUSER" : "BYPASSRLS"}): tenants would not be isolated. ALTER ROLE ${name} NOSUPERUSER NOBYPASSRLS, then migrate again`);
      }
    };
    await role(ownerRole, "NOLOGIN");
    await role(appRole, "LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE");
    if (options.appPassword !== undefined) await client.query(`ALTER ROLE "${appRole}" PASSWORD ${client.escapeLiteral(options.appPassword)}`);
    // A non-superuser migrator becomes a member of both, to create the tables as the owner and so
    // that a host connecting with these credentials can SET ROLE to the runtime's role.
    if (!me.super) {
      await client.query(`GRANT "${ownerRole}" TO CURRENT_USER`);
      await client.query(`GRANT "${appRole}" TO CURRENT_USER`);
    }
    await client.query(`CREATE SCHEMA IF NOT EXISTS "${schema}" AUTHORIZATION "${ownerRole}"`);
    const from = await schemaVersion(client, schema);
    if (from > SCHEMA_VERSION) throw tooNew(address, from);
    if (from < SCHEMA_VERSION) {
      await client.query(`SET LOCAL ROLE "${ownerRole}"`);
      const steps = migrations(address);
      for (let v = from; v < SCHEMA_VERSION; v++) await client.query(steps[v] as string);
      await client.query(`INSERT INTO "${schema}".meta (key, value) VALUES ('schema_version', $1) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`, [String(SCHEMA_VERSION)]);
      await client.query("RESET ROLE");
    }
    const sessions = await migrateSessions(client, address);
    const workflows = await migrateWorkflows(client, address);
    const runs = await migrateRuns(client, address);
    await client.query("COMMIT");
    return { schema, from, to: SCHEMA_VERSION, rolesCreated, ownerRole, appRole, connectedAs: me.name, sessions, workflows, runs };
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined);
    if (error instanceof PostgresStoreError) throw error;
    throw new PostgresStoreError("STORE_MIGRATION_FAILED", `migrating schema ${schema} at ${address.display} failed: ${describePgError(error)}`);
  } finally {
    await client.end().catch(() => undefined);
  }
}
