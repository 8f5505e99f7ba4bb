/**
 * Search over facts and full history: document extraction, the incremental BM25 index with its
 * snapshot, and queries.
 */
export * from "./MemorySearch.ts"
export * from "./SearchIndexCache.ts"
