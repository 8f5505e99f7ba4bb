/**
 * Search over every session replicated into the fleet, with the local ranking.
 */
export * from "./FleetSearch.ts"
