/**
 * Readers of one session and of a sessions root: lookup, inspection, verification, event streams and
 * the recent-sessions listing. Every other projection feature builds on this folder.
 */
export * from "./EventStream.ts"
export * from "./Inspection.ts"
export * from "./RecentSessions.ts"
export * from "./SessionLookup.ts"
export * from "./SkippedSessions.ts"
export * from "./Verification.ts"
