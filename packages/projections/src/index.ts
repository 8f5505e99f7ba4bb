/**
 * Public entry point of @logbook/projections: re-exports only.
 */
export * from "./AuditPack.ts"
export * from "./EventStream.ts"
export * from "./Inspection.ts"
export * from "./MatrixState.ts"
export * from "./PackSigning.ts"
export * from "./RecentSessions.ts"
export * from "./SessionLookup.ts"
export * from "./Verification.ts"
