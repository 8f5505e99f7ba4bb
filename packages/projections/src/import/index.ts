/**
 * Importers of foreign agent histories. The one writer in projections: it writes sessions through
 * the store's `EventLog` and derives their memory views.
 */
export * from "./ForeignLines.ts"
export * from "./Importer.ts"
