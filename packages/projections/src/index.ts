/**
 * Public entry point of @logbook/projections: re-exports only. The read side: every reader of a
 * log or a sessions root — session lookup, inspection, verification, event streams, recent
 * sessions, search, packs, explanations, matrix state — as a stream over the bytes folded with
 * domain's reducers, without a lock, a repair or a metadata write. Two features also write, always
 * through `@logbook/store`: the importer (`import/`, the one writer of sessions here: it appends
 * imported events) and memory derivation (`memory/`, which saves the derived memory view); search
 * saves only its index snapshot, a derived file below the sessions root.
 */
export * from "./explain/index.ts"
export * from "./import/index.ts"
export * from "./matrix/index.ts"
export * from "./memory/index.ts"
export * from "./packs/index.ts"
export * from "./session/index.ts"
