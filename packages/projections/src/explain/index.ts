/**
 * Explanations of a session and the evidence behind each fact; renderers live in `render/`.
 */
export * from "./Evidence.ts"
export * from "./Explanation.ts"
export * from "./render/index.ts"
