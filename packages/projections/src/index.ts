/**
 * Public entry point of @logbook/projections: re-exports only.
 */
export * from "./EventStream.ts"
export * from "./ForeignLines.ts"
export * from "./Importer.ts"
export * from "./Inspection.ts"
export * from "./MatrixState.ts"
export * from "./RecentSessions.ts"
export * from "./SessionLookup.ts"
export * from "./Verification.ts"
