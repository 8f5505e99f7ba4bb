/**
 * The fleet database: connection layer, migrations and the per-session data readers.
 */
export * from "./FleetDatabase.ts"
export * from "./FleetMigrations.ts"
export * from "./FleetSessionData.ts"
