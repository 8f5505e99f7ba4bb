/**
 * Public entry point of @logbook/projections: re-exports only.
 */
export * from "./EventStream.ts"
export * from "./Inspection.ts"
export * from "./MatrixState.ts"
export * from "./MemoryDerivation.ts"
export * from "./MemoryFacts.ts"
export * from "./MemorySearch.ts"
export * from "./RecentSessions.ts"
export * from "./SessionLookup.ts"
export * from "./Verification.ts"
