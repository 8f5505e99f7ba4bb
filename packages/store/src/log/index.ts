/**
 * The canonical log: `EventLog` (buffered appends, the durability order, cap rewrites, recovery by
 * rescan), the session registry, metadata files, the manifest cache and the turn index sidecar.
 */
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
export * from "./IdGenerator.ts"
export * from "./LineSplitter.ts"
export * from "./ManifestCache.ts"
export * from "./MetaStore.ts"
export * from "./SessionPaths.ts"
export * from "./SessionRegistry.ts"
export * from "./SummaryHook.ts"
export * from "./TurnIndexSidecar.ts"
