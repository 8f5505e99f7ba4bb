/**
 * Fleet sessions: listing, showing and restoring replicated sessions.
 */
export * from "./FleetRestore.ts"
export * from "./FleetSessions.ts"
