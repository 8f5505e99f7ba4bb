/**
 * The goal tracker state machine and the progress ledger, as pure reducers over their wire files.
 */
export * from "./GoalTracker.ts"
export * from "./ProgressLedger.ts"
