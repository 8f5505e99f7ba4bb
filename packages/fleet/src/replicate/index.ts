/**
 * Replication of a local store into the fleet database.
 */
export { MAX_BATCH_RETRIES } from "./internal/batches.ts"
export * from "./ReplicationError.ts"
export * from "./Replicator.ts"
