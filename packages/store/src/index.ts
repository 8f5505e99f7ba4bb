/**
 * Public entry point of @logbook/store: re-exports only.
 */
export {}
