/**
 * Public entry point of @logbook/runtime: re-exports only.
 */
export * from "./SessionMemory.ts"
