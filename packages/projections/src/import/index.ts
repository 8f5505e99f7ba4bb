/**
 * Importers of foreign agent histories. The one writer in projections: it writes sessions through
 * the store's `EventLog` and derives their memory views. `Importer` runs an import (source
 * discovery, admission, the JSONL pipeline or the whole-file JSON import per source);
 * `ImportReport` is what it reports.
 */
export { hasCursorChats } from "./CursorStateDb.ts"
export * from "./ForeignLines.ts"
export * from "./Importer.ts"
export * from "./ImportReport.ts"
export * from "./JsonlImport.ts"
export { MAX_JSON_SESSION_BYTES } from "./JsonSessionImport.ts"
