/**
 * Audit packs verified against what the fleet holds.
 */
export * from "./FleetPackVerify.ts"
