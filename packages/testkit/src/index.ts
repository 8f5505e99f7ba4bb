/**
 * Public entry point of @logbook/testkit (private; test support only): re-exports only.
 */
export * from "./CliRunner.ts"
export * from "./Events.ts"
export * from "./Explanations.ts"
export * from "./Files.ts"
export * from "./FleetDatabase.ts"
export * from "./FleetLines.ts"
export * from "./FuzzLines.ts"
export * from "./Items.ts"
export * from "./LogLines.ts"
export * from "./MatrixSpecs.ts"
export * from "./MemoryViews.ts"
export * from "./PlantedSession.ts"
export * from "./Prng.ts"
export * from "./SessionsRoot.ts"
export * from "./TempDir.ts"
