/**
 * Explanations: the pure fold of a log into "what the agent did and whether to trust it".
 */
export * from "./Explanation.ts"
