/**
 * Public entry point of @logbook/runtime: re-exports only. Composition: `SessionMemory` (the
 * scoped layer a host records a session with, its goal tracking and matrix coordination) over
 * `store` and `projections`; the `logbook` CLI lives under `cli/`.
 */
export * from "./explain/index.ts"
export * from "./GoalTracking.ts"
export * from "./MatrixCoordinator.ts"
export * from "./recorder/index.ts"
/** The `logbook mcp` server (docs/mcp.md): its toolkit, handlers and stdio layer, for hosts that serve it themselves. */
export * as Mcp from "./mcp/index.ts"
/** The `logbook serve` web app (docs/serve.md): its handler, pages and Node server, for hosts that serve it themselves. */
export * as Serve from "./serve/index.ts"
export * from "./SessionMemory.ts"
