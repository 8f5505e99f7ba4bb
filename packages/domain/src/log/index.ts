/**
 * The one meaning of a session log: session files and ids, the turn lifecycle, the scan that decides
 * which metadata to trust, the turn index and its columnar table, cap eviction and its summary,
 * retention plans and RFC 3339 times.
 */
export * from "./CapEviction.ts"
export * from "./EvictionSummary.ts"
export * from "./Lifecycle.ts"
export * from "./LogScan.ts"
export * from "./RetentionPlan.ts"
export * from "./Rfc3339.ts"
export * from "./SessionFiles.ts"
export * from "./SessionId.ts"
export * from "./TurnIndex.ts"
export * from "./TurnTable.ts"
