/**
 * Public entry point of @logbook/runtime: re-exports only.
 */
export {}
