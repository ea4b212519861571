/**
 * `pulse store migrate --store postgres://…`: creates or updates the PostgreSQL store's schema and
 * its roles (adapters/postgres/migrate.ts). Run it once per schema, with an owner's credentials,
 * before hosts connect; running it again is harmless.
 */
import type { Command } from "commander";
import { EXIT, UsageError } from "./exit-codes.js";
import type { CliIO } from "./io.js";

export const STORE_MIGRATE_HELP = `
Creates the schema (default "pulse", or ?schema=name in the URL) and two roles: <schema>_owner
(NOLOGIN, owns the tables) and <schema>_app (LOGIN, NOSUPERUSER, NOBYPASSRLS), the role hosts
work as, so row-level security always applies to them; and the coding sessions' tables
(pulse_sessions, pulse_iterations, for pulse session --store postgres://…). Connect as a
superuser, or as a role with CREATEROLE and CREATE on the database. Give <schema>_app a password
with --app-password (or PULSE_APP_PASSWORD) when hosts connect as it with password
authentication.

Exit codes: 0 migrated (or already current); 1 the database refused (a schema written by a newer
pulse, a runtime role that could bypass row-level security, missing privileges); 2 usage error.`;

export function addStoreMigrateOptions(cmd: Command): Command {
  return cmd
    .requiredOption("--store <url>", "the PostgreSQL store: postgres://user@host:5432/database[?schema=name]")
    .option("--app-password <password>", "set the runtime role's password (default: $PULSE_APP_PASSWORD, else unchanged)");
}

export async function runStoreMigrate(opts: { store: string; appPassword?: string }, io: CliIO): Promise<number> {
  if (!/^postgres(ql)?:\/\//.test(opts.store)) throw new UsageError(`--store: pulse store migrate sets up a PostgreSQL store (postgres://…), not ${JSON.stringify(opts.store)}; embedded stores migrate themselves when opened`);
  const { migrate, PostgresAddressError, PostgresStoreError } = await import("../../adapters/postgres/index.js");
  const password = opts.appPassword ?? io.env.PULSE_APP_PASSWORD;
  try {
    const r = await migrate(opts.store, password ? { appPassword: password } : {});
    const roles = r.rolesCreated.length > 0 ? `created roles ${r.rolesCreated.join(", ")}` : `roles ${r.ownerRole}, ${r.appRole} already there`;
    const schema = r.from === r.to ? `schema ${r.schema} already at version ${r.to}` : `schema ${r.schema} migrated from version ${r.from} to ${r.to}`;
    const sessions = r.sessions.from === r.sessions.to ? "" : `; session tables ${r.sessions.from === 0 ? "created at" : `migrated from version ${r.sessions.from} to`} version ${r.sessions.to}`;
    const workflows = r.workflows.from === r.workflows.to ? "" : `; workflow tables ${r.workflows.from === 0 ? "created at" : `migrated from version ${r.workflows.from} to`} version ${r.workflows.to}`;
    const runs = r.runs.from === r.runs.to ? "" : `; agent run tables and run views ${r.runs.from === 0 ? "created at" : `migrated from version ${r.runs.from} to`} version ${r.runs.to}`;
    io.stdout(`${schema}${sessions}${workflows}${runs}; ${roles} (connected as ${r.connectedAs}). Hosts work as ${r.appRole}.\n`);
    return EXIT.ok;
  } catch (error) {
    if (error instanceof PostgresAddressError) throw new UsageError(`--store: ${error.message}`);
    if (error instanceof PostgresStoreError) {
      io.stderr(`pulse store migrate: ${error.message}\n`);
      return EXIT.problems;
    }
    throw error;
  }
}
