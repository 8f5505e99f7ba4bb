/**
 * Ranked search across every session of a store (docs/search.md): `facts` ranks the grounded
 * facts of the session memory views exactly as VT Code's `search_memory` does (BM25 with
 * k1 = 1.2, b = 0.75, the mild recency multiplier, ties by chunk id); `history` ranks the
 * retained turns of every log (goal, agent messages, plans, decisions, commands, paths, errors)
 * by the same rules. An incremental index (kept by a host's `SearchIndexCache`) keeps one segment per session keyed by the
 * (size, mtime) signature of its source file, so only changed sessions are re-read; a compact
 * snapshot of it under the sessions root lets a one-shot CLI search start without rebuilding.
 */
import type { ThreadEvent } from "@logbook/domain"
import {
  DEFAULT_MAX_RESULTS,
  distinctTokens,
  parseRfc3339,
  readMemoryFactsText,
  redactSecrets,
  snippetAround
} from "@logbook/domain"
import type { StoreIoError } from "@logbook/store"
export type { IndexDoc as SearchDocument, SearchIndex } from "./internal/searchIndex.ts"
import { absolutePath, childPath, fileSignature, SessionFs } from "@logbook/store"
import { Clock, Effect, Option, Result, Stream } from "effect"
import { readEventRecords } from "../../session/EventStream.ts"
import { turnedEvents } from "../../session/internal/turnedEvents.ts"
import { reportSkipped } from "../../session/SkippedSessions.ts"
import type { Hit, IndexDoc, SessionDocs } from "./internal/searchIndex.ts"
import { SearchIndex, sessionDocs } from "./internal/searchIndex.ts"
import { decodeSnapshot, encodeSnapshot } from "./internal/searchSnapshot.ts"
import { currentSearchIndexes } from "./SearchIndexCache.ts"

/** What a search ranks: grounded facts of memory views, or retained turns of the logs. */
export type SearchScope = "facts" | "history"

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

const utf8 = new TextDecoder("utf-8")

// `root` is already absolute and `name` a direct child: the same paths as `pathsForDir` gives
// (`memoryViewPath` / `events`), built with one join because a root scan makes thousands.
const sourcePath = (root: string, name: string, scope: SearchScope): string =>
  scope === "facts" ? childPath(root, name, "derived", "memory.json") : childPath(root, name, "events.jsonl")

const factDocs = (bytes: Uint8Array): Array<IndexDoc> | undefined => {
  const read = readMemoryFactsText(utf8.decode(bytes))
  if (Result.isFailure(read)) return undefined
  const docs: Array<IndexDoc> = []
  read.success.facts.forEach((fact, i) => {
    if (fact !== undefined) {
      docs.push({ chunk: i, offset: 0, createdAt: read.success.createdAt, text: redactSecrets(fact) })
    }
  })
  return docs
}

/**
 * The searchable text one event adds to its turn's document, redacted (docs/security.md): the
 * index, its snapshot, the fleet's `turn_docs` and every snippet hold no secret the policy knows.
 */
export const historyText = (event: ThreadEvent): ReadonlyArray<string> => recordedText(event).map(redactSecrets)

const recordedText = (event: ThreadEvent): ReadonlyArray<string> => {
  switch (event.type) {
    case "turn.started":
      return event.context?.goal === undefined ? [] : [event.context.goal]
    case "turn.failed":
    case "turn.blocked":
    case "error":
      return [event.message]
    case "item.completed": {
      const item = event.item
      switch (item.type) {
        case "agent_message":
        case "plan":
          return [item.text]
        case "decision":
          return [item.summary, item.rationale]
        case "command_execution":
          return item.status === "failed" || (item.exit_code !== undefined && item.exit_code !== 0)
            ? [item.command, redactSecrets(item.aggregated_output).slice(-2000)]
            : [item.command]
        case "file_change":
          return item.changes.map((c) => `${c.kind} ${c.path}`)
        case "harness":
          return [item.message, item.command, item.path].filter((x): x is string => x !== undefined)
        case "error":
          return [item.message]
        default:
          return []
      }
    }
    default:
      return []
  }
}

const SNIPPET_CHARS = 240

// The stored snippet of a turn (its start), used when the query's words cannot be found again.
const snippetOf = (text: string): string => snippetAround(text, new Set(), SNIPPET_CHARS)

// A hit's turn is re-read from its start offset for at most this many bytes to place its snippet.
const SNIPPET_SCAN_BYTES = 4 * 1024 * 1024
// ...in reads of this size: every line of a read is decoded, and a turn is usually far shorter
// than the default 256 KiB read, so such a read would decode the next turns' lines for every hit
// (with --max in the thousands, most of the search's time).
const SNIPPET_READ_BYTES = 4 * 1024

const isTurnEnd = (event: ThreadEvent): boolean =>
  event.type === "turn.completed" || event.type === "turn.failed" || event.type === "turn.blocked"

/**
 * The searchable text of the turn starting at byte `start` of a session's log: its events up to
 * the turn's end event (or the next turn's start), read in bounded memory for at most
 * `SNIPPET_SCAN_BYTES` bytes.
 */
const turnTextAt = (root: string, name: string, start: number) =>
  Effect.gen(function*() {
    const fs = yield* SessionFs
    const path = sourcePath(root, name, "history")
    const info = yield* fs.lstat(path)
    if (Option.isNone(info) || info.value.type !== "File" || info.value.size <= start) return ""
    return yield* turnTextIn(path, start, Math.min(info.value.size, start + SNIPPET_SCAN_BYTES))
  })

const turnTextIn = (path: string, start: number, end: number) =>
  readEventRecords(path, { start, end, chunkSize: SNIPPET_READ_BYTES }).pipe(
    Stream.filterMap((record) => record._tag === "Event" ? Result.succeed(record) : Result.failVoid),
    Stream.takeWhile((record) => record.offset === start || record.event.type !== "turn.started"),
    Stream.takeUntil((record) => isTurnEnd(record.event)),
    Stream.runFold(() => [] as Array<string>, (parts, record) => {
      for (const part of historyText(record.event)) if (part.length > 0) parts.push(part)
      return parts
    }),
    Effect.map((parts) => parts.join("\n"))
  )

// The events of one turn as they stream by: a turn's events are contiguous in the log.
interface TurnRun {
  readonly turn: number
  readonly offset: number
  readonly ts: string
  readonly parts: Array<string>
}

const runDoc = (run: TurnRun): IndexDoc => {
  const text = run.parts.join("\n")
  return {
    chunk: run.turn,
    offset: run.offset,
    createdAt: parseRfc3339(run.ts)?.seconds ?? null,
    text,
    snippet: snippetOf(text)
  }
}

const historyDocStream = (root: string, name: string) =>
  Stream.unwrap(Effect.map(turnedEvents(root, name), ({ events }) =>
    events.pipe(
      Stream.mapAccum(
        () => undefined as TurnRun | undefined,
        (run, e): readonly [TurnRun | undefined, ReadonlyArray<IndexDoc>] => {
          if (e.turn === undefined) return [run, []]
          const parts = historyText(e.event).filter((part) => part.length > 0)
          if (run !== undefined && run.turn === e.turn.turn_number) {
            for (const part of parts) run.parts.push(part)
            return [run, []]
          }
          const next = { turn: e.turn.turn_number, offset: e.turn.start_offset, ts: e.turn.ts, parts }
          return [next, run === undefined ? [] : [runDoc(run)]]
        },
        { onHalt: (run) => run === undefined ? [] : [runDoc(run)] }
      )
    )))

/**
 * The history documents of one session as a stream, in log order, one per turn (one per run of
 * the turn's events, should a turn's events ever not be contiguous): what local search indexes
 * for the session, without holding its whole history in memory. `sessionSearchDocuments` is
 * this stream collected, with runs of one turn merged and turns in number order.
 */
export const sessionHistoryDocuments = (sessionsDir: string, name: string) =>
  historyDocStream(absolutePath(sessionsDir), name)

const historyDocs = (root: string, name: string) =>
  Effect.map(Stream.runCollect(historyDocStream(root, name)), (runs) => {
    const turns = new Map<number, IndexDoc>()
    for (const doc of runs) {
      const seen = turns.get(doc.chunk)
      if (seen === undefined) {
        turns.set(doc.chunk, doc)
        continue
      }
      const text = [seen.text, doc.text].filter((t) => t.length > 0).join("\n")
      turns.set(doc.chunk, { ...seen, text, snippet: snippetOf(text) })
    }
    return [...turns.values()].sort((a, b) => a.chunk - b.chunk)
  })

/** The documents of one session, or `undefined` when it has nothing readable to index. */
const documentsOf = (root: string, name: string, scope: SearchScope) =>
  Effect.gen(function*() {
    const fs = yield* SessionFs
    if (scope === "facts") {
      const bytes = yield* fs.readFileNoFollow(sourcePath(root, name, scope))
      return Option.isNone(bytes) ? undefined : factDocs(bytes.value)
    }
    return yield* historyDocs(root, name)
  }).pipe(
    Effect.catch((error) =>
      Effect.as(
        reportSkipped({ session: name, path: sourcePath(root, name, scope), detail: error.message }),
        undefined
      )
    )
  )

/** Builds the segment of one session, or `undefined` when it has nothing readable to index. */
const buildFor = (root: string, name: string, scope: SearchScope, sig: string) =>
  Effect.map(documentsOf(root, name, scope), (docs) => docs === undefined ? undefined : sessionDocs(name, sig, docs))

/**
 * The file a session's documents of `scope` come from (`derived/memory.json` or `events.jsonl`
 * below the resolved sessions root) and its signature (size and modification time), or
 * `undefined` when the session entry is not a directory or the file is not a regular file —
 * exactly the sessions {@link searchMemory} indexes. Symlinks are never followed.
 */
export const searchSourceOf = (
  sessionsDir: string,
  name: string,
  scope: SearchScope
): Effect.Effect<SearchSource | undefined, StoreIoError, SessionFs> =>
  Effect.gen(function*() {
    const fs = yield* SessionFs
    const root = absolutePath(sessionsDir)
    const [dir, source] = yield* fs.lstatMany([childPath(root, name), sourcePath(root, name, scope)])
    return dir?.type === "Directory" && source?.type === "File"
      ? { path: sourcePath(root, name, scope), signature: fileSignature(source) }
      : undefined
  })

/** Where a session's documents come from, as {@link searchSourceOf} reports it. */
export interface SearchSource {
  /** The absolute path of the source file (what results name as `path`). */
  readonly path: string
  /** Size and modification time: a changed signature means the documents may have changed. */
  readonly signature: string
}

/**
 * The documents {@link searchMemory} indexes for one session (`name` is its directory below
 * `sessionsDir`): one per grounded fact (chunk = index in `grounded_facts`) or one per retained
 * turn (chunk = turn number, `offset` its first byte, `text` its searchable text), or `undefined`
 * when the session has no readable source. Other indexes (the fleet's) build from this so that
 * they rank exactly the same documents.
 */
export const sessionSearchDocuments = (
  sessionsDir: string,
  name: string,
  scope: SearchScope
): Effect.Effect<ReadonlyArray<IndexDoc> | undefined, never, SessionFs> =>
  documentsOf(absolutePath(sessionsDir), name, scope)

/**
 * The snippet a history result shows for a turn whose searchable text is `text`: at most 240
 * characters, flattened, around the first word matching `query` (its start when none does).
 */
export const historySnippet = (text: string, query: string): string =>
  snippetAround(text, new Set(distinctTokens(query)), SNIPPET_CHARS)

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
      const { index } = yield* refreshUnlocked(cache.indexes, root, scope, { snapshot: options.snapshot })
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
