/**
 * Public entry point of @logbook/projections: re-exports only. The read side: every reader of a
 * log or a sessions root — session lookup, inspection, verification, event streams, recent
 * sessions, matrix state — as a stream over the bytes folded with domain's reducers, read-only
 * (no lock, no repair, no metadata written). New readers (search, packs, explanations) belong
 * here; importers read here and write through `@logbook/store`.
 */
export * from "./explain/index.ts"
export * from "./import/index.ts"
export * from "./matrix/index.ts"
export * from "./memory/index.ts"
export * from "./packs/index.ts"
export * from "./session/index.ts"
