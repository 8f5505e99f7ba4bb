/**
 * Memory views of sessions: derivation from the log (written through the store), facts, and search
 * (`search/`).
 */
export * from "./MemoryDerivation.ts"
export * from "./MemoryFacts.ts"
export * from "./search/index.ts"
