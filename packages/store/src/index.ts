/**
 * Public entry point of @logbook/store: re-exports only. The write side and the file-system
 * seam: `SessionFs` (the only module touching `node:fs`), `EventLog` (appends, the durability
 * barrier, recovery on open, cap eviction with the `SummaryHook`), `SessionRegistry`, `Retention`,
 * and read access to the metadata files. Nothing exported can write metadata around the
 * barrier. Every reader of logs and sessions (inspection, verification, streams) is in
 * `@logbook/projections`.
 */
export * from "./derived/index.ts"
export * from "./fs/index.ts"
export * from "./log/index.ts"
export * from "./retention/index.ts"
