/**
 * A host's connection to the PostgreSQL store: a pool whose every connection works as the
 * runtime's role, and transactions scoped to one workspace.
 *
 *   - Connected as the runtime's role (<schema>_app): used as is.
 *   - Connected as anyone else (the owner, a superuser): each connection switches with SET ROLE
 *     to the runtime's role, and `open` says so, so row-level security applies whoever connects.
 *     A role that cannot switch, or a runtime role that could bypass row-level security, is
 *     refused before any work.
 *   - `inWorkspace(w, fn)`: BEGIN; set_config('pulse.workspace', w, true) (SET LOCAL: the setting
 *     ends with the transaction, so a pooled connection never carries a tenant into the next);
 *     fn; COMMIT, or ROLLBACK when fn throws.
 */
import pg from "pg";
import { parsePostgresUrl, type PostgresAddress } from "./address.js";
import { describePgError, PostgresStoreError } from "./errors.js";
import { schemaVersion, tooNew } from "./migrate.js";
import { SCHEMA_VERSION } from "./schema.js";

export interface OpenOptions {
  /** Connections in the pool (default 10). */
  max?: number;
  /** Told once how the host works in the database (the SET ROLE switch). */
  onNote?: (message: string) => void;
}

export class PostgresDatabase {
  private constructor(
    readonly pool: pg.Pool,
    readonly address: PostgresAddress,
    /** The role the host connected as. */
    readonly connectedAs: string,
  ) {}

  get schema(): string {
    return this.address.schema;
  }

  /** `"schema".table`, for queries. */
  table(name: string): string {
    return `"${this.address.schema}".${name}`;
  }

  static async open(url: string, options: OpenOptions = {}): Promise<PostgresDatabase> {
    const address = parsePostgresUrl(url);
    const probe = new pg.Client({ connectionString: address.connectionString });
    try {
      await probe.connect();
    } catch (error) {
      throw new PostgresStoreError("STORE_UNAVAILABLE", `cannot connect to PostgreSQL at ${address.display}: ${describePgError(error)}`);
    }
    let connectedAs: string;
    let switchRole: boolean;
    try {
      const me = (await probe.query("SELECT current_user AS name, rolsuper AS super FROM pg_roles WHERE rolname = current_user")).rows[0] as { name: string; super: boolean };
      connectedAs = me.name;
      switchRole = me.name !== address.appRole;
      if (switchRole) {
        try {
          await probe.query(`SET ROLE "${address.appRole}"`);
        } catch (error) {
          throw new PostgresStoreError("STORE_NOT_MIGRATED", `connected to ${address.display} as ${me.name}, which cannot work as ${address.appRole} (${describePgError(error)}): run pulse store migrate --store '${address.storeArg}' with an owner's credentials first, or connect as ${address.appRole}`);
        }
      }
      const role = (await probe.query("SELECT rolsuper, rolbypassrls FROM pg_roles WHERE rolname = current_user")).rows[0] as { rolsuper: boolean; rolbypassrls: boolean };
      if (role.rolsuper || role.rolbypassrls) throw new PostgresStoreError("STORE_UNSAFE_ROLE", `role ${address.appRole} can bypass row-level security: ALTER ROLE ${address.appRole} NOSUPERUSER NOBYPASSRLS`);
      let version: number;
      try {
        version = await schemaVersion(probe, address.schema);
      } catch (error) {
        throw new PostgresStoreError("STORE_NOT_MIGRATED", `schema ${address.schema} at ${address.display} cannot be read as ${address.appRole} (${describePgError(error)}): run pulse store migrate --store '${address.storeArg}'`);
      }
      if (version === 0) throw new PostgresStoreError("STORE_NOT_MIGRATED", `schema ${address.schema} at ${address.display} has no pulse store: run pulse store migrate --store '${address.storeArg}' with an owner's credentials first`);
      if (version > SCHEMA_VERSION) throw tooNew(address, version);
      if (version < SCHEMA_VERSION) throw new PostgresStoreError("STORE_NOT_MIGRATED", `schema ${address.schema} at ${address.display} is at store schema version ${version}, this pulse needs ${SCHEMA_VERSION}: run pulse store migrate --store '${address.storeArg}'`);
    } finally {
      await probe.end().catch(() => undefined);
    }
    // A connection that fails to switch is discarded with the error: nothing runs as the owner.
    const onConnect = switchRole ? async (client: pg.ClientBase) => void (await client.query(`SET ROLE "${address.appRole}"`)) : undefined;
    // allowExitOnIdle: an idle pool does not keep a finished `pulse run --once` alive.
    const pool = new pg.Pool({ connectionString: address.connectionString, max: options.max ?? 10, allowExitOnIdle: true, ...(onConnect ? { onConnect } : {}) });
    // An idle connection that breaks (the server restarted) must not crash the host.
    pool.on("error", () => undefined);
    // Nor one that breaks while checked out between two queries: its next query fails instead.
    pool.on("connect", (client) => void client.on("error", () => undefined));
    if (switchRole) options.onNote?.(`connected to ${address.display} as ${connectedAs}: working as ${address.appRole} (SET ROLE), so row-level security applies`);
    return new PostgresDatabase(pool, address, connectedAs);
  }

  /** Runs `fn` in one transaction that sees and writes only `workspace`'s rows. */
  async inWorkspace<T>(workspace: string, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    if (workspace === "") throw new PostgresStoreError("STORE_NO_WORKSPACE", "a transaction needs a workspace: the empty string is none");
    const client = await this.pool.connect();
    try {
      await client.query("BEGIN");
      await client.query("SELECT set_config('pulse.workspace', $1, true)", [workspace]);
      const result = await fn(client);
      await client.query("COMMIT");
      return result;
    } catch (error) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
