/**
 * Public entry point of @logbook/domain: re-exports only. The pure core, no I/O: the ThreadEvent
 * contract as Schemas with its canonical encoder, the line classifier, the one meaning of a log
 * (`LogScan`, `TurnIndex`: which metadata to trust, the turn base after a rewrite, where turn n
 * is) and every state machine as a reducer. `store` and `projections` only run these over bytes.
 */
export * from "./contract/index.ts"
export * from "./explain/index.ts"
export * from "./goals/index.ts"
export * from "./import/index.ts"
export * from "./log/index.ts"
export * from "./matrix/index.ts"
export * from "./memory/index.ts"
export * from "./packs/index.ts"
