/**
 * Public entry point of @logbook/store: re-exports only.
 */
export * from "./DiskUsage.ts"
export * as EventLog from "./EventLog.ts"
export type {
  AppendError,
  LockState,
  OpenError,
  OpenOptions,
  ReconstructedTurn,
  SessionLog,
  SnapshotLine
} from "./EventLog.ts"
export * from "./EventLogError.ts"
export * from "./GoalStore.ts"
export * from "./IdGenerator.ts"
export * from "./LineSplitter.ts"
export * from "./Liveness.ts"
export * from "./ManifestCache.ts"
export * from "./MatrixWorkspace.ts"
export * from "./MemoryViewStore.ts"
export * from "./MetaStore.ts"
export * from "./Retention.ts"
export * from "./SessionFs.ts"
export * from "./SessionPaths.ts"
export * from "./SessionRegistry.ts"
export * from "./StoreError.ts"
export * from "./SummaryHook.ts"
