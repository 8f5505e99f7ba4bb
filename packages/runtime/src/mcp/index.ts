/**
 * The `logbook mcp` server (docs/mcp.md): the toolkit and its Schemas, the handlers over a
 * sessions root, the budget and cursor, and the stdio server layer.
 */
export * from "./Budget.ts"
export * from "./McpHandlers.ts"
export * from "./McpServer.ts"
export * from "./McpTools.ts"
