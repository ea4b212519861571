/**
 * `--store postgres://user[:password]@host[:port]/database[?schema=name]`: a PostgreSQL
 * connection string as libpq reads it, plus `schema` (default "pulse"), which names the schema
 * the store's tables live in and the two roles migrations create for it:
 *
 *   <schema>_owner   NOLOGIN, owns the tables
 *   <schema>_app     LOGIN, NOSUPERUSER, NOBYPASSRLS: the runtime's role, under row-level security
 *
 * Several deployments (or test runs) share one database by using different schemas.
 */
export interface PostgresAddress {
  /** What `pg` connects to: the URL without `schema`. */
  connectionString: string;
  schema: string;
  ownerRole: string;
  appRole: string;
  /** The URL without its password, for messages. */
  display: string;
  /** The --store argument that names this schema, without the password (for the commands messages suggest). */
  storeArg: string;
}

const SCHEMA = /^[a-z_][a-z0-9_]{0,50}$/;

export class PostgresAddressError extends Error {
  override readonly name = "PostgresAddressError";
}

export function parsePostgresUrl(text: string): PostgresAddress {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new PostgresAddressError(`${JSON.stringify(redactPassword(text))} is not a PostgreSQL URL; use postgres://user@host:5432/database`);
  }
  if (url.protocol !== "postgres:" && url.protocol !== "postgresql:") throw new PostgresAddressError(`${JSON.stringify(redactPassword(text))} is not a PostgreSQL URL (postgres:// or postgresql://)`);
  const schema = url.searchParams.get("schema") ?? "pulse";
  if (!SCHEMA.test(schema)) throw new PostgresAddressError(`schema=${JSON.stringify(schema)}: a schema name is a lowercase letter or _ then up to 50 of a-z, 0-9 and _`);
  url.searchParams.delete("schema");
  const display = redactPassword(url.toString());
  const storeArg = `${display}${display.includes("?") ? "&" : "?"}schema=${schema}`;
  return { connectionString: url.toString(), schema, ownerRole: `${schema}_owner`, appRole: `${schema}_app`, display, storeArg };
}

export function redactPassword(text: string): string {
  return text.replace(/\/\/([^:@/]*):[^@/]*@/, "//$1:***@");
}
