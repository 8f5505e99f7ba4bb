/**
 * Search over the fleet (`search/`).
 */
export * from "./search/index.ts"
