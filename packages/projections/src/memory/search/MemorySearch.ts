/**
 * Ranked search across every session of a store (docs/search.md): `facts` ranks the grounded
 * facts of the session memory views exactly as VT Code's `search_memory` does (BM25 with
 * k1 = 1.2, b = 0.75, the mild recency multiplier, ties by chunk id); `history` ranks the
 * retained turns of every log (goal, agent messages, plans, decisions, commands, paths, errors)
 * by the same rules. An incremental index (kept by a host's `SearchIndexCache`) keeps one segment per session keyed by the
 * (size, mtime) signature of its source file, so only changed sessions are re-read; a compact
 * snapshot of it under the sessions root lets a one-shot CLI search start without rebuilding.
 */
import { DEFAULT_MAX_RESULTS, readMemoryFactsText, redactSecrets } from "@logbook/domain"
import type { StoreIoError } from "@logbook/store"
import { buildFor, historySnippet, sourcePath, turnTextAt, utf8 } from "./SearchDocuments.ts"
import type { SearchScope } from "./SearchDocuments.ts"
export type { IndexDoc as SearchDocument, SearchIndex } from "./internal/searchIndex.ts"
import { absolutePath, childPath, fileSignature, SessionFs } from "@logbook/store"
import { Clock, Effect, Option, Result } from "effect"
import { reportSkipped } from "../../session/SkippedSessions.ts"
import type { Hit, SessionDocs } from "./internal/searchIndex.ts"
import { SearchIndex } from "./internal/searchIndex.ts"
import { decodeSnapshot, encodeSnapshot } from "./internal/searchSnapshot.ts"
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
  /** Load and save the index snapshot under the sessions root (default true). */
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

/** The file name of a scope's index snapshot, directly below the sessions root (a dot name: never a session). */
export const searchSnapshotName = (scope: SearchScope): string => `.logbook-search-${scope}.idx`

/** What one refresh did (for tests and progress). */
export interface RefreshStats {
  readonly fromSnapshot: boolean
  readonly rebuilt: number
  readonly removed: number
  readonly sessions: number
}

const loadSnapshot = (root: string, scope: SearchScope) =>
  Effect.gen(function*() {
    const fs = yield* SessionFs
    const bytes = yield* fs.readFileNoFollow(childPath(root, searchSnapshotName(scope))).pipe(
      Effect.catch(() => Effect.succeed(Option.none<Uint8Array>()))
    )
    return Option.isNone(bytes) ? undefined : decodeSnapshot(scope, bytes.value)
  })

/**
 * Brings the index of (`sessionsDir`, `scope`) up to date: loads the snapshot when this process
 * has no index yet, re-reads only sessions whose source file signature changed, drops sessions
 * that are gone, and saves the snapshot when anything changed. Symlinked session entries and
 * source files are never read.
 *
 * **Gotchas**: a change that keeps both size and mtime (same size, within the file system's
 * timestamp granularity) is not seen until the next change; failing to save the snapshot is
 * ignored (the next run rebuilds what it must).
 */
export const refreshSearchIndex = (
  sessionsDir: string,
  scope: SearchScope,
  options: { readonly snapshot?: boolean | undefined } = {}
): Effect.Effect<{ readonly index: SearchIndex; readonly stats: RefreshStats }, StoreIoError, SessionFs> =>
  Effect.flatMap(
    currentSearchIndexes,
    (cache) => cache.lock.withPermit(refreshUnlocked(cache.indexes, sessionsDir, scope, options))
  )

const refreshUnlocked = (
  indexes: Map<string, SearchIndex>,
  sessionsDir: string,
  scope: SearchScope,
  options: { readonly snapshot?: boolean | undefined }
): Effect.Effect<{ readonly index: SearchIndex; readonly stats: RefreshStats }, StoreIoError, SessionFs> =>
  Effect.gen(function*() {
    const fs = yield* SessionFs
    const root = absolutePath(sessionsDir)
    const key = `${scope}\0${root}`
    const useSnapshot = options.snapshot !== false
    let index = indexes.get(key)
    let fromSnapshot = false
    if (index === undefined) {
      const packed = useSnapshot ? yield* loadSnapshot(root, scope) : undefined
      fromSnapshot = packed !== undefined
      index = new SearchIndex(packed)
      index.saved = fromSnapshot
      indexes.set(key, index)
    }
    const rootInfo = yield* fs.lstat(root)
    if (Option.isNone(rootInfo) || rootInfo.value.type !== "Directory") {
      for (const name of index.sessions()) index.remove(name)
      index.pack()
      return { index, stats: { fromSnapshot, rebuilt: 0, removed: 0, sessions: 0 } }
    }
    const names = (yield* fs.listDir(root)).filter((name) => !name.startsWith("."))
    // One batch of lstats for the entries and one for their source files.
    const dirs = yield* fs.lstatMany(names.map((name) => childPath(root, name)))
    const sessions = names.filter((_, i) => dirs[i]?.type === "Directory")
    const sources = yield* fs.lstatMany(sessions.map((name) => sourcePath(root, name, scope)))
    const present = new Set<string>()
    let rebuilt = 0
    let removed = 0
    for (let i = 0; i < sessions.length; i++) {
      const name = sessions[i]
      const info = sources[i]
      if (name === undefined || info === undefined) continue
      if (info.type !== "File") {
        // A FIFO, directory or link planted at the source is never opened: the session is left out, said so.
        const path = sourcePath(root, name, scope)
        yield* reportSkipped({ session: name, path, detail: `not a regular file (${info.type})` })
        continue
      }
      const sig = fileSignature(info)
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
    if (useSnapshot && !index.saved) {
      const saved = index
      yield* fs.writeAtomic(childPath(root, searchSnapshotName(scope)), encodeSnapshot(scope, packed)).pipe(
        Effect.andThen(Effect.sync(() => {
          saved.saved = true
        })),
        Effect.catch((e) => Effect.logDebug(`search snapshot not saved: ${e.message}`))
      )
    }
    return { index, stats: { fromSnapshot, rebuilt, removed, sessions: packed.sessionNames.length } }
  })

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
    const hits = yield* cache.lock.withPermit(Effect.gen(function*() {
      const held = options.refresh === false ? cache.indexes.get(`${scope}\0${root}`) : undefined
      const { index } = held !== undefined
        ? { index: held }
        : yield* refreshUnlocked(cache.indexes, root, scope, { snapshot: options.snapshot })
      return index.search(query, {
        maxResults: options.maxResults ?? DEFAULT_MAX_RESULTS,
        minScore: options.minScore ?? 0,
        now
      })
    }))
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
