/**
 * Public entry point of @logbook/store: re-exports only.
 */
export * from "./StoreError.ts"
export * from "./SessionFs.ts"
export * from "./Liveness.ts"
export * from "./SessionPaths.ts"
export * from "./MetaStore.ts"
export * from "./EventLogError.ts"
export * from "./SessionRegistry.ts"
export * as EventLog from "./EventLog.ts"
export type { AppendError, LockState, OpenOptions, ReconstructedTurn, SessionLog, SnapshotLine } from "./EventLog.ts"
export * from "./CapRewrite.ts"
