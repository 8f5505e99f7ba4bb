/**
 * Public entry point of @logbook/fleet: re-exports only. The fleet store: session stores
 * replicated into PostgreSQL (the per-machine store stays the source of truth), and the queries
 * that search and audit them across machines. Sits above the read side: runtime → fleet →
 * projections → store → domain.
 */
export * from "./FleetDatabase.ts"
export * from "./FleetMigrations.ts"
export * from "./FleetPackVerify.ts"
export * from "./FleetRestore.ts"
export * from "./FleetSearch.ts"
export * from "./FleetSessionData.ts"
export * from "./FleetSessions.ts"
export * from "./Replicator.ts"
