/**
 * Public entry point of @logbook/projections: re-exports only.
 */
export * from "./EventStream.ts"
export * from "./Evidence.ts"
export * from "./Explanation.ts"
export * from "./ExplanationHtml.ts"
export * from "./ExplanationText.ts"
export * from "./Inspection.ts"
export * from "./MatrixState.ts"
export * from "./RecentSessions.ts"
export * from "./SessionLookup.ts"
export * from "./Verification.ts"
