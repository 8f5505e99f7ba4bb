/**
 * Public entry point of @logbook/domain: re-exports only. The pure core, no I/O: the ThreadEvent
 * contract as Schemas with its canonical encoder, the line classifier, the one meaning of a log
 * (`LogScan`, `TurnIndex`: which metadata to trust, the turn base after a rewrite, where turn n
 * is) and every state machine as a reducer. `store` and `projections` only run these over bytes.
 */
export * from "./AuditPack.ts"
export * from "./Bm25.ts"
export * from "./CapEviction.ts"
export * from "./Classify.ts"
export * from "./Encode.ts"
export * from "./EvictionSummary.ts"
export * from "./Explanation.ts"
export * from "./GoalTracker.ts"
export * from "./Lifecycle.ts"
export * from "./LifecycleKind.ts"
export * from "./LogScan.ts"
export * as Matrix from "./Matrix.ts"
export * from "./MatrixError.ts"
export * from "./MatrixSnapshot.ts"
export * from "./MatrixSpec.ts"
export * from "./MemoryView.ts"
export * from "./ProgressLedger.ts"
export * from "./Redaction.ts"
export * from "./RetentionPlan.ts"
export * from "./Rfc3339.ts"
export * from "./SearchText.ts"
export * from "./SessionFiles.ts"
export * from "./SessionId.ts"
export * from "./ThreadEvent.ts"
export * from "./ThreadItem.ts"
export * from "./TurnIndex.ts"
