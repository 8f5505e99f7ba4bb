/**
 * Public entry point of @logbook/store: re-exports only. The write side and the file-system
 * seam: `SessionFs` (the only module touching `node:fs`), `EventLog` (appends, the durability
 * barrier, recovery on open, cap eviction with the `SummaryHook`), `SessionRegistry`, `Retention`,
 * and read access to the metadata files. Nothing exported can write metadata around the
 * barrier. Every reader of logs and sessions (inspection, verification, streams) is in
 * `@logbook/projections`.
 */
export * from "./AuditPackFile.ts"
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
export * from "./ImportState.ts"
export * from "./LineSplitter.ts"
export * from "./Liveness.ts"
export * from "./ManifestCache.ts"
export * from "./MatrixWorkspace.ts"
export * from "./MemoryViewStore.ts"
export * from "./MetaStore.ts"
export * from "./Migration.ts"
export * from "./Retention.ts"
export * from "./SessionFs.ts"
export * from "./SessionPaths.ts"
export * from "./SessionRegistry.ts"
export * from "./StoreError.ts"
export * from "./SummaryHook.ts"
export * from "./TurnIndexSidecar.ts"
