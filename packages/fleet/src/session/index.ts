/**
 * Fleet sessions: listing, showing, explaining and restoring replicated sessions.
 */
export * from "./FleetExplanation.ts"
export * from "./FleetRestore.ts"
export * from "./FleetSessions.ts"
export * from "./FleetTurns.ts"
