/**
 * Public entry point of @logbook/projections: re-exports only. The read side: every reader of a
 * log or a sessions root — session lookup, inspection, verification, event streams, recent
 * sessions, matrix state — as a stream over the bytes folded with domain's reducers, read-only
 * (no lock, no repair, no metadata written). New readers (search, packs, explanations) belong
 * here; importers read here and write through `@logbook/store`.
 */
export * from "./AuditPack.ts"
export * from "./EventStream.ts"
export * from "./Evidence.ts"
export * from "./Explanation.ts"
export * from "./ExplanationHtml.ts"
export * from "./ExplanationText.ts"
export * from "./ForeignLines.ts"
export * from "./Importer.ts"
export * from "./Inspection.ts"
export * from "./MatrixState.ts"
export * from "./MemoryDerivation.ts"
export * from "./MemoryFacts.ts"
export * from "./MemorySearch.ts"
export * from "./PackSigning.ts"
export * from "./RecentSessions.ts"
export * from "./SessionLookup.ts"
export * from "./Verification.ts"
