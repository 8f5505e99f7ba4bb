/**
 * Ranked search across every session of a store (docs/search.md): `facts` ranks the grounded
 * facts of the session memory views exactly as VT Code's `search_memory` does (BM25 with
 * k1 = 1.2, b = 0.75, the mild recency multiplier, ties by chunk id); `history` ranks the
 * retained turns of every log (goal, agent messages, plans, decisions, commands, paths, errors)
 * by the same rules. The index lives on disk under the sessions root (docs/search.md#on-disk-index):
 * immutable segments of sessions keyed by the (size, mtime) signature of their source files, a
 * manifest naming the live ones and a deletion set, so only changed sessions are re-read and a
 * one-shot CLI search reads only its terms' postings; a host's `SearchIndexCache` keeps it open.
 */
import { DEFAULT_MAX_RESULTS, readMemoryFactsText, redactSecrets } from "@logbook/domain"
import type { StoreIoError } from "@logbook/store"
import { buildFor, historySnippet, sourcePath, turnTextAt, utf8 } from "./SearchDocuments.ts"
import type { SearchScope } from "./SearchDocuments.ts"
export type { IndexDoc as SearchDocument, SearchIndex } from "./internal/searchIndex.ts"
export type { SegmentedIndex } from "./internal/segmentedIndex.ts"
import { absolutePath, fileSignature, SessionFs } from "@logbook/store"
import { Clock, Context, Effect, Option, Result } from "effect"
import { reportSkipped } from "../../session/SkippedSessions.ts"
import type { Hit, QueryOptions, SessionDocs } from "./internal/searchIndex.ts"
import { SearchIndex } from "./internal/searchIndex.ts"
import {
  commit,
  FLUSH_DOCS,
  mergeSegments,
  openIndex,
  removeUnreferenced,
  searchSegments,
  SegmentedIndex,
  writeSegment
} from "./internal/segmentedIndex.ts"
import type { SegmentCorrupt } from "./internal/segmentFile.ts"
import { currentSearchIndexes } from "./SearchIndexCache.ts"
export type { SearchScope } from "./SearchDocuments.ts"

/** Options of {@link searchMemory}. */
export interface SearchOptions {
  /** Default `facts`. */
  readonly scope?: SearchScope | undefined
  /** Default 6. */
  readonly maxResults?: number | undefined
  /** Compared with the final score (after the recency multiplier); default 0. */
  readonly minScore?: number | undefined
  /** Unix seconds for the recency multiplier; default the `Clock`. */
  readonly now?: number | undefined
  /** Use the on-disk index under the sessions root (default true); `false` builds one in memory. */
  readonly snapshot?: boolean | undefined
  /**
   * `false`: query the index the host's {@link SearchIndexCache} already holds, without checking
   * every session for changes first (a host that refreshes it on its own schedule with
   * {@link refreshSearchIndex}, as `logbook serve` does); an index not built yet is built first.
   * Default true: every search sees every change.
   */
  readonly refresh?: boolean | undefined
}

/**
 * One result, with the serialised field names of VT Code's `MemorySearchResult`; history results
 * also name the turn and its byte offset (`logbook turn <session> <turn>` opens it).
 */
export interface MemorySearchResult {
  readonly chunk_id: string
  readonly path: string
  readonly start_line: number
  readonly end_line: number
  readonly score: number
  readonly snippet: string
  readonly source: "session"
  readonly created_at: number | null
  /** The session's directory name. */
  readonly session: string
  readonly turn?: number
  readonly offset?: number
}

/**
 * The file name of a scope's index manifest, directly below the sessions root (a dot name: never a
 * session); its segments are the `.logbook-search-<scope>-<generation>-<pid>.seg` files beside it.
 */
export const searchSnapshotName = (scope: SearchScope): string => `.logbook-search-${scope}.idx`

/** What one refresh did (for tests and progress). */
export interface RefreshStats {
  readonly fromSnapshot: boolean
  readonly rebuilt: number
  readonly removed: number
  readonly sessions: number
}

/**
 * Where a build reports its progress: sessions checked out of all, documents indexed and bytes of
 * source read so far. The default drops the reports; the CLI prints a line on a terminal.
 */
export const SearchBuildProgress = Context.Reference<
  (
    progress: { readonly done: number; readonly total: number; readonly bytes: number; readonly final: boolean }
  ) => Effect.Effect<void>
>("@logbook/projections/SearchBuildProgress", { defaultValue: () => () => Effect.void })

/**
 * Brings the index of (`sessionsDir`, `scope`) up to date: opens the on-disk index (its manifest
 * and segment headers) when this process holds none yet, re-reads only sessions whose source file
 * signature changed into new segments, deletes sessions that are gone, merges segments when too
 * many are live, and commits the manifest when anything changed. With `snapshot: false` nothing
 * is read from or written to disk: the index is built in memory. Symlinked session entries and
 * source files are never read.
 *
 * **Gotchas**: a change that keeps both size and mtime (same size, within the file system's
 * timestamp granularity) is not seen until the next change; failing to write the index is
 * ignored (the next run rebuilds what it must), and the search still answers from what this
 * process indexed.
 */
export const refreshSearchIndex = (
  sessionsDir: string,
  scope: SearchScope,
  options: RefreshOptions = {}
): Effect.Effect<{ readonly index: LoadedIndex; readonly stats: RefreshStats }, StoreIoError, SessionFs> =>
  Effect.flatMap(
    currentSearchIndexes,
    (cache) => cache.lock.withPermit(refreshUnlocked(cache.indexes, sessionsDir, scope, options))
  )

/** Options of {@link refreshSearchIndex}. */
export interface RefreshOptions {
  /** `false`: build in memory, never read or write the on-disk index (default true). */
  readonly snapshot?: boolean | undefined
  /** Documents per new segment (default `FLUSH_DOCS`; tests use small ones to get many segments). */
  readonly flushDocs?: number | undefined
  /** Live segments above which the smallest merge (default `MAX_SEGMENTS`). */
  readonly maxSegments?: number | undefined
}

/** An index a refresh returns: in memory (`snapshot: false`) or on disk. */
export type LoadedIndex = SearchIndex | SegmentedIndex

interface Scan {
  readonly sessions: ReadonlyArray<{ readonly name: string; readonly sig: string; readonly size: number }>
}

/** The sessions of the root with a regular source file, and their signatures (`undefined`: no root). */
const scanRoot = (root: string, scope: SearchScope) =>
  Effect.gen(function*() {
    const fs = yield* SessionFs
    const rootInfo = yield* fs.lstat(root)
    if (Option.isNone(rootInfo) || rootInfo.value.type !== "Directory") return undefined
    // The entries' types come with the listing (no lstat per session directory); one batch of
    // lstats for their source files.
    const candidates = (yield* fs.listDirTypes(root)).filter((e) => !e.name.startsWith(".") && e.type === "Directory")
      .map((e) => e.name)
    const sources = yield* fs.lstatMany(candidates.map((name) => sourcePath(root, name, scope)))
    const sessions: Array<{ name: string; sig: string; size: number }> = []
    for (let i = 0; i < candidates.length; i++) {
      const name = candidates[i]
      const info = sources[i]
      if (name === undefined || info === undefined) continue
      if (info.type !== "File") {
        // A FIFO, directory or link planted at the source is never opened: the session is left out, said so.
        const path = sourcePath(root, name, scope)
        yield* reportSkipped({ session: name, path, detail: `not a regular file (${info.type})` })
        continue
      }
      sessions.push({ name, sig: fileSignature(info), size: info.size })
    }
    return { sessions } satisfies Scan
  })

const refreshUnlocked = (
  indexes: Map<string, LoadedIndex>,
  sessionsDir: string,
  scope: SearchScope,
  options: RefreshOptions
): Effect.Effect<{ readonly index: LoadedIndex; readonly stats: RefreshStats }, StoreIoError, SessionFs> =>
  options.snapshot === false
    ? refreshMemory(indexes, sessionsDir, scope)
    : refreshDisk(indexes, sessionsDir, scope, options)

const refreshMemory = (indexes: Map<string, LoadedIndex>, sessionsDir: string, scope: SearchScope) =>
  Effect.gen(function*() {
    const root = absolutePath(sessionsDir)
    const key = `${scope}\0${root}\0memory`
    const held = indexes.get(key)
    const index = held instanceof SearchIndex ? held : new SearchIndex()
    indexes.set(key, index)
    const scan = yield* scanRoot(root, scope)
    const present = new Set<string>()
    let rebuilt = 0
    let removed = 0
    for (const { name, sig } of scan?.sessions ?? []) {
      present.add(name)
      if (index.signature(name) === sig) continue
      const docs: SessionDocs | undefined = yield* buildFor(root, name, scope, sig)
      rebuilt++
      if (docs === undefined) {
        present.delete(name)
        continue
      }
      index.put(docs)
    }
    for (const name of index.sessions()) {
      if (!present.has(name)) {
        index.remove(name)
        removed++
      }
    }
    const packed = index.pack()
    return { index, stats: { fromSnapshot: false, rebuilt, removed, sessions: packed.sessionNames.length } }
  })

const refreshDisk = (
  indexes: Map<string, LoadedIndex>,
  sessionsDir: string,
  scope: SearchScope,
  options: RefreshOptions
) =>
  Effect.gen(function*() {
    const root = absolutePath(sessionsDir)
    const key = `${scope}\0${root}`
    const held = indexes.get(key)
    let index: SegmentedIndex
    let fromSnapshot = false
    if (held instanceof SegmentedIndex) index = held
    else {
      const opened = yield* openIndex(root, scope)
      index = opened.index
      fromSnapshot = opened.loaded
      // Without a manifest no segment file is referenced: leftovers of a crashed build go now.
      if (!opened.loaded) yield* removeUnreferenced(index)
      indexes.set(key, index)
    }
    const scan = yield* scanRoot(root, scope)
    if (scan === undefined) {
      for (const name of [...index.sessionAt.keys()]) index.remove(name)
      return { index, stats: { fromSnapshot, rebuilt: 0, removed: 0, sessions: 0 } }
    }
    const report = yield* SearchBuildProgress
    const present = new Set<string>()
    const changed = scan.sessions.filter((s) => {
      present.add(s.name)
      return index.signature(s.name) !== s.sig
    })
    let removed = 0
    for (const name of [...index.sessionAt.keys()]) {
      if (!present.has(name)) {
        index.remove(name)
        removed++
      }
    }
    let builder = new SearchIndex()
    let pendingDocs = 0
    let indexedDocs = 0
    let bytes = 0
    let writable = true
    const flush = Effect.gen(function*() {
      if (pendingDocs === 0 && builder.sessions().length === 0) return
      const packed = builder.pack()
      builder = new SearchIndex()
      pendingDocs = 0
      if (packed.sessionNames.length === 0) return
      const segment = yield* writeSegment(index, packed)
      index.add(segment)
      yield* commit(index)
    }).pipe(
      Effect.catch((e) =>
        Effect.andThen(
          Effect.sync(() => {
            writable = false
          }),
          Effect.logDebug(`search index not saved: ${e.message}`)
        )
      )
    )
    // Sessions that fail to index are deleted from the index, as gone ones are.
    let rebuilt = 0
    for (let i = 0; i < changed.length; i++) {
      const entry = changed[i]
      if (entry === undefined) continue
      const docs: SessionDocs | undefined = yield* buildFor(root, entry.name, scope, entry.sig)
      rebuilt++
      bytes += entry.size
      if (docs === undefined) {
        index.remove(entry.name)
        continue
      }
      builder.put(docs)
      pendingDocs += docs.docs.length
      indexedDocs += docs.docs.length
      if (writable && pendingDocs >= (options.flushDocs ?? FLUSH_DOCS)) yield* flush
      if (i % 64 === 63) yield* report({ done: i + 1, total: changed.length, bytes, final: false })
    }
    if (!writable) {
      // The disk refused the index: this process answers from memory, segments it wrote kept.
      return yield* memoryFallback(indexes, root, scope, fromSnapshot)
    }
    yield* flush
    if (changed.length > 0) yield* report({ done: changed.length, total: changed.length, bytes, final: true })
    if (writable && (removed > 0 || changed.length > 0)) {
      // A merge may move at most a few times what this refresh indexed (at least one flush's worth):
      // larger merges wait for a larger update, so a search after one change stays fast.
      yield* mergeSegments(index, options.maxSegments, Math.max(FLUSH_DOCS, 4 * indexedDocs)).pipe(
        // The refresh's last commit also sweeps files no manifest names (a crashed build's).
        Effect.andThen(commit(index, { sweep: true })),
        Effect.catch((e) =>
          Effect.andThen(
            Effect.sync(() => {
              writable = false
            }),
            Effect.logDebug(`search index not saved: ${e.message}`)
          )
        )
      )
    }
    if (!writable) return yield* memoryFallback(indexes, root, scope, fromSnapshot)
    return { index, stats: { fromSnapshot, rebuilt, removed, sessions: index.sessionAt.size } }
  })

// When the on-disk index cannot be written (a planted FIFO at the manifest, a full disk), the
// search is answered from an in-memory index of the same documents.
const memoryFallback = (
  indexes: Map<string, LoadedIndex>,
  root: string,
  scope: SearchScope,
  fromSnapshot: boolean
) =>
  Effect.map(refreshMemory(indexes, root, scope), ({ index, stats }) => {
    indexes.set(`${scope}\0${root}`, index)
    return { index, stats: { ...stats, fromSnapshot } }
  })

/** Drops a segment found damaged during a query so that the next refresh re-indexes its sessions. */
const dropDamaged = (indexes: Map<string, LoadedIndex>, root: string, scope: SearchScope, error: SegmentCorrupt) =>
  Effect.gen(function*() {
    yield* Effect.logDebug(error.message)
    const held = indexes.get(`${scope}\0${root}`)
    if (!(held instanceof SegmentedIndex)) return
    const damaged = held.segments.find((s) => s.path === error.path)
    if (damaged !== undefined) held.drop(damaged.file)
  })

// Damaged segments one search repairs before it answers from memory instead.
const MAX_REPAIRS = 16

/** Ranks a query over an index of either kind. */
const queryIndex = (index: LoadedIndex, query: string, options: QueryOptions) =>
  index instanceof SearchIndex ? Effect.succeed(index.search(query, options)) : searchSegments(index, query, options)

/** What a result says about its hit: which chunk of which session, and how it ranked. */
export interface SearchResultHit {
  readonly session: string
  /** The chunk index: a history result's turn. */
  readonly chunk: number
  readonly chunkId: string
  readonly score: number
  readonly createdAt: number | null
}

/**
 * Builds one {@link MemorySearchResult} in its serialised field order; a history result also
 * carries its turn (`hit.chunk`) and `offset`, a facts result ignores `offset`.
 */
export const searchResult = (
  scope: SearchScope,
  hit: SearchResultHit,
  path: string,
  snippet: string,
  offset: number
): MemorySearchResult => {
  const base = {
    chunk_id: hit.chunkId,
    path,
    start_line: 0,
    end_line: 0,
    score: hit.score,
    source: "session" as const,
    created_at: hit.createdAt,
    session: hit.session
  }
  return scope === "history"
    ? { ...base, snippet, turn: hit.chunk, offset }
    : { ...base, snippet }
}

const toResult = (
  root: string,
  scope: SearchScope,
  hit: Hit,
  facts: Map<string, ReadonlyArray<string | undefined>>
): MemorySearchResult =>
  searchResult(
    scope,
    hit,
    sourcePath(root, hit.session, scope),
    // Facts snippets are read back from the memory view, which a host may have written unredacted.
    scope === "history" ? hit.snippet ?? "" : redactSecrets(facts.get(hit.session)?.[hit.chunk] ?? ""),
    hit.offset
  )

/**
 * Searches every session below `sessionsDir`. An empty or punctuation-only query, a missing root
 * or an empty corpus give no results. Facts snippets are read back from the (signature-checked)
 * memory views of the hits' sessions only; history snippets are windows around the first query
 * word in the hit turns, re-read from their byte offsets (the indexed turn start when that fails).
 */
export const searchMemory = Effect.fn("MemorySearch.searchMemory")(
  function*(sessionsDir: string, query: string, options: SearchOptions = {}) {
    const fs = yield* SessionFs
    const scope = options.scope ?? "facts"
    const root = absolutePath(sessionsDir)
    const now = options.now ?? Math.floor((yield* Clock.currentTimeMillis) / 1000)
    const cache = yield* currentSearchIndexes
    const queryOptions = { maxResults: options.maxResults ?? DEFAULT_MAX_RESULTS, minScore: options.minScore ?? 0, now }
    const key = options.snapshot === false ? `${scope}\0${root}\0memory` : `${scope}\0${root}`
    const attempt = (refresh: boolean) =>
      Effect.gen(function*() {
        const held = refresh ? undefined : cache.indexes.get(key)
        const { index } = held !== undefined
          ? { index: held }
          : yield* refreshUnlocked(cache.indexes, root, scope, { snapshot: options.snapshot })
        return yield* queryIndex(index, query, queryOptions)
      })
    // A damaged segment (checksum, truncation, removed under us) is dropped and its sessions
    // re-indexed before answering, one segment per retry; past that, the answer comes from memory.
    const answer = (refresh: boolean, retries: number): Effect.Effect<Array<Hit>, StoreIoError, SessionFs> =>
      attempt(refresh).pipe(
        Effect.catchTag("SegmentCorrupt", (e) =>
          retries > 0
            ? Effect.andThen(dropDamaged(cache.indexes, root, scope, e), answer(true, retries - 1))
            : Effect.map(refreshMemory(cache.indexes, root, scope), ({ index }) => index.search(query, queryOptions)))
      )
    const hits = yield* cache.lock.withPermit(answer(options.refresh !== false, MAX_REPAIRS))
    const facts = new Map<string, ReadonlyArray<string | undefined>>()
    if (scope === "facts") {
      for (const name of new Set(hits.map((h) => h.session))) {
        const bytes = yield* fs.readFileNoFollow(sourcePath(root, name, scope)).pipe(
          Effect.catch(() => Effect.succeed(Option.none<Uint8Array>()))
        )
        if (Option.isNone(bytes)) continue
        const read = readMemoryFactsText(utf8.decode(bytes.value))
        if (Result.isSuccess(read)) facts.set(name, read.success.facts)
      }
    }
    const results = hits.map((hit): MemorySearchResult => toResult(root, scope, hit, facts))
    if (scope !== "history") return results
    // History snippets are placed around the first query word, from the hit turns re-read.
    return yield* Effect.forEach(
      results,
      (result) =>
        result.offset === undefined ? Effect.succeed(result) : turnTextAt(root, result.session, result.offset).pipe(
          Effect.map((text) => text.length === 0 ? result : { ...result, snippet: historySnippet(text, query) }),
          Effect.catch(() => Effect.succeed(result))
        )
    )
  }
)
