/**
 * Public entry point of @logbook/domain: re-exports only.
 */
export * from "./LifecycleKind.ts"
