/**
 * Matrix state replayed from a session's `matrix.updated` checkpoints.
 */
export * from "./MatrixState.ts"
