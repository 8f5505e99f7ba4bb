/**
 * Pure mappers from foreign agent formats (Codex, Claude Code, Gemini, GitHub Copilot CLI, Cline / Roo Code, Cursor, Aider, OpenCode, `codex exec --json`) to
 * ThreadEvents, with the import cursor that lets an import stop and resume anywhere.
 */
export * from "./AiderHistory.ts"
export * from "./ClaudeToolResults.ts"
export * from "./ClaudeTranscript.ts"
export * from "./ClineTask.ts"
export * from "./CodexExec.ts"
export * from "./CodexRollout.ts"
export * from "./CopilotEvents.ts"
export * from "./CursorComposer.ts"
export * from "./CursorTranscript.ts"
export * from "./GeminiSession.ts"
export * from "./ImportCursor.ts"
export * from "./OpenCodeExport.ts"
