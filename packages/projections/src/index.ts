/**
 * Public entry point of @logbook/projections: re-exports only.
 */
export * from "./EventStream.ts"
export * from "./MatrixState.ts"
export * from "./RecentSessions.ts"
