/**
 * Replication of a local store into the fleet database.
 */
export * from "./Replicator.ts"
