/**
 * Audit packs: the Schema of a pack, its digest and the comparison of a pack with a session's files.
 */
export * from "./AuditPack.ts"
