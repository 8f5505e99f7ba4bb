/**
 * The effect/ai recorder (docs/embedding.md#recorder): a `LanguageModel` decorator and toolkit
 * wrapper that record an agent's calls through `SessionMemory`, the pure mapping of prompts and
 * response parts to ThreadItems, and the resume of a recorded session as a `Prompt`.
 */
export * from "./AiMapping.ts"
export * from "./AiRecorder.ts"
export * from "./PromptResume.ts"
