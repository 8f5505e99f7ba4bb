/**
 * Workspace context for explanations (a git snapshot of the workspace).
 */
export * from "./WorkspaceGit.ts"
