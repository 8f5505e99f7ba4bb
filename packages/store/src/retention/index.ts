/**
 * Bounded growth across sessions: retention runs and sweeps, pins, liveness of locks, disk usage
 * and the legacy VT Code migration (which pins what it imports).
 */
export * from "./DiskUsage.ts"
export * from "./Liveness.ts"
export * from "./Migration.ts"
export * from "./Retention.ts"
