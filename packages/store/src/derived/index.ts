/**
 * Derived and primary side files of a session: goal and progress files, the memory view, the
 * import state, the audit pack file and the matrix workspace.
 */
export * from "./AuditPackFile.ts"
export * from "./GoalStore.ts"
export * from "./ImportState.ts"
export * from "./MatrixWorkspace.ts"
export * from "./MemoryViewStore.ts"
