/**
 * The memory view and what ranks it: the view's Schema and derivation fold, BM25 scoring and snippets.
 */
export * from "./Bm25.ts"
export * from "./MemoryView.ts"
export * from "./Snippet.ts"
