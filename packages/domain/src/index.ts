/**
 * Public entry point of @logbook/domain: re-exports only.
 */
export {}
