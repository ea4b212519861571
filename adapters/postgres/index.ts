/** The PostgreSQL store's parts (`pulse/adapters/postgres`): docs/deploy.md. */
export { parsePostgresUrl, PostgresAddressError, type PostgresAddress } from "./address.js";
export { PostgresDatabase, type OpenOptions } from "./database.js";
export { PostgresStoreError } from "./errors.js";
export { claimSignature, type Claim } from "./idempotency.js";
export { migrate, type MigrateReport } from "./migrate.js";
export { SCHEMA_VERSION, TENANT_TABLES } from "./schema.js";
export { PostgresLeases } from "./leases.js";
export { chainHash, GENESIS, PostgresAudit, type ChainReport } from "./audit.js";
export { postgresSubstrateFactory } from "./substrates.js";
export { PostgresStore } from "./store.js";
export { PostgresSessionRecords } from "./session-records.js";
export { SESSION_SCHEMA_VERSION } from "./session-schema.js";
