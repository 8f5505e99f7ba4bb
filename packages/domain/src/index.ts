/**
 * Public entry point of @logbook/domain: re-exports only.
 */
export * from "./LifecycleKind.ts"
export * from "./SessionFiles.ts"
export * from "./SessionId.ts"
export * from "./Lifecycle.ts"
export * from "./TurnIndex.ts"
export * from "./CapEviction.ts"
export * from "./ThreadItem.ts"
export * from "./ThreadEvent.ts"
export * from "./Encode.ts"
export * from "./Classify.ts"
export * from "./GoalTracker.ts"
export * from "./ProgressLedger.ts"
export * from "./EvictionSummary.ts"
