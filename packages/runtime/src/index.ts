/**
 * Public entry point of @logbook/runtime: re-exports only.
 */
export * from "./GoalTracking.ts"
export * from "./MatrixCoordinator.ts"
export * from "./SessionMemory.ts"
