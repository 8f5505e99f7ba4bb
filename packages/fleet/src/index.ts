/**
 * Public entry point of @logbook/fleet: re-exports only. The fleet store: session stores
 * replicated into PostgreSQL (the per-machine store stays the source of truth), and the queries
 * that search and audit them across machines. Sits above the read side: runtime → fleet →
 * projections → store → domain.
 */
export * from "./db/index.ts"
export * from "./memory/index.ts"
export * from "./packs/index.ts"
export * from "./replicate/index.ts"
export * from "./session/index.ts"
