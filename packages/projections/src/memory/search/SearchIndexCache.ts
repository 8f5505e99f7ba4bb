/**
 * The in-memory search indexes a long-lived host keeps between searches: one index per (sessions
 * root, scope), refreshed incrementally, with one refresh or query at a time mutating them. It is
 * a service so that its lifetime is the host's layer, not the process: two hosts (or two tests)
 * never share indexes, and a one-shot command that does not provide it builds what it needs
 * (from the on-disk index) for the one search it runs.
 *
 * **Gotchas**: every read and write of `indexes` happens under `lock`; an index may only be
 * used after a refresh under the same permit, or a concurrent refresh could repack it under a
 * running query.
 */
import { Context, Effect, Layer, Option, Semaphore } from "effect"
import type { SearchIndex } from "./internal/searchIndex.ts"
import type { SegmentedIndex } from "./internal/segmentedIndex.ts"

/** The indexes and the permit that serialises their refreshes and queries. */
export interface SearchIndexes {
  readonly indexes: Map<string, SearchIndex | SegmentedIndex>
  readonly lock: Semaphore.Semaphore
}

/** A fresh, empty set of indexes. */
export const makeSearchIndexes: Effect.Effect<SearchIndexes> = Effect.map(
  Semaphore.make(1),
  (lock) => ({ indexes: new Map<string, SearchIndex | SegmentedIndex>(), lock })
)

/**
 * The search indexes of a host: provide {@link SearchIndexCache.layer} once (the CLI and
 * `SessionMemory`'s Node layers do) and every search in its scope reuses and refreshes them.
 */
export class SearchIndexCache extends Context.Service<SearchIndexCache, SearchIndexes>()(
  "@logbook/projections/SearchIndexCache"
) {
  /** An empty cache whose lifetime is the layer's. */
  static readonly layer: Layer.Layer<SearchIndexCache> = Layer.effect(SearchIndexCache, makeSearchIndexes)
}

/** The host's indexes when it provides {@link SearchIndexCache}, else a set that lives for one call. */
export const currentSearchIndexes: Effect.Effect<SearchIndexes> = Effect.flatMap(
  Effect.serviceOption(SearchIndexCache),
  (cache) => Option.isSome(cache) ? Effect.succeed(cache.value) : makeSearchIndexes
)
