/**
 * Search over facts and full history: what is indexed (`SearchDocuments`: the documents of a
 * session, shared with the fleet), the incremental BM25 index on disk and its queries
 * (`MemorySearch`), and the host's index cache (`SearchIndexCache`).
 */
export * from "./MemorySearch.ts"
export {
  historySnippet,
  historyText,
  searchSourceOf,
  sessionHistoryDocuments,
  sessionSearchDocuments
} from "./SearchDocuments.ts"
export type { SearchSource } from "./SearchDocuments.ts"
export * from "./SearchIndexCache.ts"
