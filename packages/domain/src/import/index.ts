/**
 * Pure mappers from foreign agent formats (Codex, Claude Code, Gemini, `codex exec --json`) to
 * ThreadEvents, with the import cursor that lets an import stop and resume anywhere.
 */
export * from "./ClaudeTranscript.ts"
export * from "./CodexExec.ts"
export * from "./CodexRollout.ts"
export * from "./GeminiSession.ts"
export * from "./ImportCursor.ts"
