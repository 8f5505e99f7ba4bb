/**
 * What search indexes (docs/search.md): the documents of one session — one per grounded fact of
 * its memory view, or one per retained turn of its log with the turn's searchable text (goal,
 * messages, plans, decisions, commands, paths, errors), redacted — and where they come from. The
 * fleet builds its search tables from the same functions, so both rank exactly the same text.
 */
import type { Classified, ThreadEvent } from "@logbook/domain"
import {
  classifyWithValue,
  decodeClassified,
  decodeTextEventFast,
  distinctTokens,
  exceedsJsonDepth,
  parseRfc3339,
  readMemoryFactsText,
  redactSecrets,
  snippetAround
} from "@logbook/domain"
import type { RawLine, StoreIoError } from "@logbook/store"
import { absolutePath, childPath, fileSignature, makeLineSplitter, SessionFs } from "@logbook/store"
import { Effect, Option, Result, Stream } from "effect"
import { sep } from "node:path"
import { readEventRecords } from "../../session/EventStream.ts"
import { inspectSession } from "../../session/Inspection.ts"
import { turnedEvents } from "../../session/internal/turnedEvents.ts"
import { reportSkipped } from "../../session/SkippedSessions.ts"
import type { IndexDoc } from "./internal/searchIndex.ts"
import { sessionDocs } from "./internal/searchIndex.ts"

/** What a search ranks: grounded facts of memory views, or retained turns of the logs. */
export type SearchScope = "facts" | "history"

/** UTF-8 without BOM stripping surprises: the decoder every source read here uses. */
export const utf8 = new TextDecoder("utf-8")

/**
 * The file a session's documents of a scope come from. `root` is already absolute and `name` a direct child: the same paths as `pathsForDir` gives
 * (`memoryViewPath` / `events`), built with one join because a root scan makes thousands.
 */
export const sourcePath = (root: string, name: string, scope: SearchScope): string => {
  // A normal root and a plain child name join to themselves: one string, no normalisation pass.
  if (isPlainRoot(root) && isPlainName(name)) {
    return `${root}/${name}/${scope === "facts" ? "derived/memory.json" : "events.jsonl"}`
  }
  return scope === "facts" ? childPath(root, name, "derived", "memory.json") : childPath(root, name, "events.jsonl")
}

// What `NodePath.join` leaves as it is: an absolute POSIX path without empty, `.` or `..`
// components and without a trailing separator.
const isPlainRoot = (root: string): boolean =>
  sep === "/" && root.length > 1 && root.startsWith("/") && !root.endsWith("/") && !root.endsWith("/.") &&
  !root.endsWith("/..") && !root.includes("//") && !root.includes("/./") && !root.includes("/../") &&
  !root.includes("\\")
const isPlainName = (name: string): boolean =>
  name.length > 0 && name !== "." && name !== ".." && !name.includes("/") && !name.includes("\\")

export const factDocs = (bytes: Uint8Array): Array<IndexDoc> | undefined => {
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

const NO_TERMS: ReadonlySet<string> = new Set()

/**
 * The stored snippet of a turn (its start, `snippetAround` with no words), used when the query's
 * words cannot be found again. Without words to place it, the snippet depends only on the text's
 * start: a prefix whose flattened form is longer than the snippet gives the same one, without
 * flattening a long turn.
 */
export const storedSnippet = (text: string): string => {
  for (let n = 4 * SNIPPET_CHARS; n < text.length; n *= 4) {
    const head = text.slice(0, n)
    if (head.replace(/\s+/gu, " ").trim().length >= SNIPPET_CHARS + 2) {
      return snippetAround(head, NO_TERMS, SNIPPET_CHARS)
    }
  }
  return snippetAround(text, NO_TERMS, SNIPPET_CHARS)
}
const snippetOf = storedSnippet

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
export const turnTextAt = (root: string, name: string, start: number) =>
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

// Item types whose completion adds text to its turn (see `recordedText`); every other line is quiet.
// **Gotchas**: keep in step with `recordedText`: a type missing here would lose its text.
const TEXT_ITEMS: ReadonlySet<string> = new Set([
  "agent_message",
  "plan",
  "decision",
  "command_execution",
  "file_change",
  "harness",
  "error"
])

const mayAddText = (type: string, value: unknown): boolean => {
  // The event types `recordedText` reads (turn.started and turn.failed come decoded, as lifecycle lines).
  if (type === "error" || type === "turn.blocked" || type === "turn.started" || type === "turn.failed") return true
  if (type !== "item.completed" || typeof value !== "object" || value === null || !("event" in value)) return false
  const event = value.event
  if (typeof event !== "object" || event === null || !("item" in event)) return false
  const item = event.item
  // An item without a string type does not decode: a quiet line (decoded only if it could open a run).
  return typeof item === "object" && item !== null && "type" in item && typeof item.type === "string" &&
    TEXT_ITEMS.has(item.type)
}

/** The decoded event of a Counted line without its envelope: the fast decoder, else the Schema. */
const eventOfLine = (classified: Classified): ThreadEvent | undefined => {
  const { text, value } = classified
  if (text !== undefined && !exceedsJsonDepth(text)) {
    const fast = decodeTextEventFast(value)
    if (fast !== undefined) return fast
  }
  const decoded = decodeClassified(classified)
  return decoded !== undefined && Result.isSuccess(decoded) ? decoded.success.event : undefined
}

// One line of the log as the build needs it: its span and, for an event, its text parts; a quiet
// line (Counted, adds no text, not decoded) has no parts.
interface LineNote {
  readonly offset: number
  readonly length: number
  readonly parts: ReadonlyArray<string> | undefined
}

const noteOf = (line: RawLine, classified: Classified): LineNote | undefined => {
  const cls = classified.cls
  if (cls._tag === "Skip") return undefined
  const span = { offset: line.offset, length: line.bytes.length }
  if (cls.envelope === undefined && !mayAddText(cls.type, classified.value)) return { ...span, parts: undefined }
  const event = cls.envelope !== undefined ? cls.envelope.event : eventOfLine(classified)
  // An undecodable line is no record of the stream: dropped, as a blank one.
  if (event === undefined) return undefined
  return { ...span, parts: historyText(event).filter((part) => part.length > 0) }
}

/**
 * The runs of {@link historyDocStream}, computed from one read of the log without fully decoding
 * every line: each line is classified (one `JSON.parse`, shared with the inspection's rescan when
 * one runs), a line that can add text is decoded by the fast decoder (the Schema when it is
 * unsure), and a quiet line — one whose type adds no text — is decoded only when its decodability
 * matters, that is when it would open a new run (in a log Logbook wrote, never: a turn opens with
 * its `turn.started`). A line counts exactly when the stream's `logRecordOf` would make it an
 * `Event`, so the runs are the same (a test compares them).
 */
const historyRuns = (root: string, name: string) =>
  Effect.gen(function*() {
    const fs = yield* SessionFs
    const notes: Array<LineNote> = []
    const collect = (line: RawLine, classified: Classified): void => {
      const note = noteOf(line, classified)
      if (note !== undefined) notes.push(note)
    }
    const inspection = yield* inspectSession(root, name, { problems: false, onLine: collect, probeLock: false })
    const entries = [...inspection.effectiveEntries].sort((a, b) => a.start_offset - b.start_offset)
    const path = inspection.paths.events
    const fileLen = inspection.fileLen
    const docs: Array<IndexDoc> = []
    if (fileLen === 0 || entries.length === 0) return docs
    if (inspection.scan === undefined) {
      // The stored index was trusted (no rescan ran): the lines are read here.
      const splitter = makeLineSplitter(0)
      yield* fs.stream(path, { start: 0, end: fileLen }).pipe(
        Stream.runForEach((chunk) =>
          Effect.sync(() => {
            for (const line of splitter.push(chunk)) collect(line, classifyWithValue(line.bytes))
          })
        )
      )
      for (const line of splitter.end()) collect(line, classifyWithValue(line.bytes))
    }
    let next = 0
    let run: TurnRun | undefined
    for (const note of notes) {
      const offset = note.offset
      while (next < entries.length && (entries[next]?.end_offset ?? 0) <= offset) next++
      const entry = entries[next]
      if (entry === undefined || entry.start_offset > offset) continue
      const sameRun = run !== undefined && run.turn === entry.turn_number
      let parts = note.parts
      if (parts === undefined) {
        if (sameRun) continue
        // A quiet line that would open a run: it does only if it decodes.
        const bytes = yield* fs.readRange(path, offset, offset + note.length)
        const decoded = decodeClassified(classifyWithValue(bytes))
        if (decoded === undefined || Result.isFailure(decoded)) continue
        parts = []
      }
      if (run !== undefined && sameRun) {
        for (const part of parts) run.parts.push(part)
        continue
      }
      if (run !== undefined) docs.push(runDoc(run))
      run = { turn: entry.turn_number, offset: entry.start_offset, ts: entry.ts, parts: [...parts] }
    }
    if (run !== undefined) docs.push(runDoc(run))
    return docs
  })

const historyDocs = (root: string, name: string) =>
  Effect.map(historyRuns(root, name), (runs) => {
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
export const buildFor = (root: string, name: string, scope: SearchScope, sig: string) =>
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
