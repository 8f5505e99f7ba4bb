/**
 * Audit packs over a session directory: create, verify, sign.
 */
export * from "./AuditPack.ts"
export * from "./PackSigning.ts"
