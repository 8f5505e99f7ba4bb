/**
 * Matrix orchestration state as pure reducers: the matrix rules, replay of `matrix.updated`
 * checkpoints and the matrix errors.
 */
export * as Matrix from "./Matrix.ts"
export * from "./MatrixError.ts"
