/**
 * Read-only inspection of a session directory: what the stored metadata says, what a rescan of
 * `events.jsonl` finds, and the manifest and turn index `EventLog.open` would arrive at.
 * Inspection tools (the CLI's `show`, `turn`, `verify`, event streams) use this instead of
 * `EventLog.open`, which would take the lock, terminate a torn tail and publish metadata —
 * writes that an inspector must not make, least of all while a live writer is mid-record.
 * Nothing here creates, repairs or locks anything.
 *
 * The inspector decides nothing on its own: trust in the stored metadata, the turn base and the
 * rebuilt manifest come from domain's `TurnIndex` and `LogScan`, and every line is folded
 * through the same `scanLine` reducer as the writer's rescan, after accounting for the repair
 * the next open makes (a torn tail gains its newline). On top, every counted line is fully
 * decoded to find records that turn reconstruction would silently drop.
 */
import type {
  Classified,
  LifecycleKind,
  LineClass,
  LogScan,
  LogState,
  Manifest,
  PendingCapRewrite,
  RescanInput,
  TurnEntry,
  TurnTable,
  VersionedThreadEvent
} from "@logbook/domain"
import {
  classifyAndDecodeLine,
  classifyLine,
  classifyWithValue,
  decodeLineText,
  decodeManifestText,
  decodePendingCapRewriteText,
  decodeTurnIndexText,
  emptyLogScan,
  entriesOf,
  formatRfc3339,
  isManifestTrusted,
  isStoredMetadataTrusted,
  isTableConsistent,
  isTableValid,
  matchingMarker,
  provisionalTurnBase,
  rebaseLogScan,
  rebuiltManifest,
  repairedLength,
  rescanTurnBase,
  scanEntries,
  scanLine,
  sessionDirName,
  turnTableOf
} from "@logbook/domain"
import type { SessionPaths } from "@logbook/store"
import type { RawLine } from "@logbook/store"
import { isSessionLive, loadTurnIndexSidecar, SessionFs, splitLines, StoreIoError } from "@logbook/store"
import { Clock, Effect, Option, Result, Schema, Stream } from "effect"
import { findSession } from "./SessionLookup.ts"

/** What one raw line of `events.jsonl` is, judged the way scan and reconstruction judge it. */
export type LineCheck =
  /** Empty or whitespace only: skipped by the scan, never reported. */
  | { readonly _tag: "Blank" }
  /** A counted line that fully decodes. */
  | { readonly _tag: "Event"; readonly envelope: VersionedThreadEvent; readonly lifecycle: LifecycleKind }
  /** Skipped by the scan (not counted, no lifecycle effect): invalid UTF-8, not JSON, bad envelope, bad lifecycle record. */
  | { readonly _tag: "Malformed"; readonly reason: string }
  /** Counted by the scan (envelope and `type` are fine) but not decodable, so reconstruction drops it. */
  | { readonly _tag: "Undecodable"; readonly type: string; readonly lifecycle: LifecycleKind; readonly reason: string }

const lenient = new TextDecoder("utf-8")
const strict = new TextDecoder("utf-8", { fatal: true })

/** One line of a schema error, bounded: log lines can hold megabytes of tool output. */
const oneLine = (text: string): string => {
  const flat = text.replace(/\s+/gu, " ").trim()
  return flat.length > 240 ? `${flat.slice(0, 237)}...` : flat
}

const malformedReason = (bytes: Uint8Array): string => {
  const valid = Result.try(() => strict.decode(bytes))
  if (Result.isFailure(valid)) return "not valid UTF-8"
  const decoded = decodeLineText(valid.success.trim())
  if (Result.isFailure(decoded)) return oneLine(decoded.failure.message)
  return decoded.success.event.type === "turn.completed"
    ? "turn.completed whose usage is not a JSON object"
    : "rejected by the scan classifier"
}

/** {@link checkLine} for a line already classified (the scan's classification of these bytes). */
const checkClassified = (
  bytes: Uint8Array,
  cls: LineClass,
  known?: Result.Result<VersionedThreadEvent, Schema.SchemaError>
): LineCheck => {
  if (cls._tag === "Skip") {
    if (lenient.decode(bytes).trim().length === 0) return { _tag: "Blank" }
    return { _tag: "Malformed", reason: malformedReason(bytes) }
  }
  if (cls.envelope !== undefined) return { _tag: "Event", envelope: cls.envelope, lifecycle: cls.lifecycle }
  const decoded = known ?? decodeLineText(lenient.decode(bytes).trim())
  return Result.isSuccess(decoded)
    ? { _tag: "Event", envelope: decoded.success, lifecycle: cls.lifecycle }
    : { _tag: "Undecodable", type: cls.type, lifecycle: cls.lifecycle, reason: oneLine(decoded.failure.message) }
}

/**
 * Classifies one line (bytes with or without the trailing `\n`). The `Malformed`/`Event` split
 * is exactly `classifyLine`'s Skip/Counted; reasons are computed only for bad lines.
 */
export const checkLine = (bytes: Uint8Array): LineCheck => {
  const { cls, decoded } = classifyAndDecodeLine(bytes)
  return checkClassified(bytes, cls, decoded)
}

/** A metadata file as found on disk. */
export type Stored<A> =
  | { readonly _tag: "Present"; readonly value: A }
  | { readonly _tag: "Missing" }
  | { readonly _tag: "Invalid"; readonly reason: string }

const readStored = <A>(
  path: string,
  decode: (text: string) => Result.Result<A, Schema.SchemaError>
): Effect.Effect<Stored<A>, never, SessionFs> =>
  Effect.gen(function*() {
    const fs = yield* SessionFs
    const read = yield* Effect.result(fs.readFileNoFollow(path))
    if (Result.isFailure(read)) return { _tag: "Invalid", reason: `cannot be read: ${read.failure.detail}` } as const
    if (Option.isNone(read.success)) return { _tag: "Missing" } as const
    const decoded = decode(lenient.decode(read.success.value))
    return Result.isSuccess(decoded)
      ? { _tag: "Present", value: decoded.success } as const
      : { _tag: "Invalid", reason: oneLine(decoded.failure.message) } as const
  })

const presentOrUndefined = <A>(stored: Stored<A>): A | undefined => stored._tag === "Present" ? stored.value : undefined

/** The first lines of each kind a report lists; the counts are always complete. */
export const MAX_REPORTED_LINES = 100

/** A line the scan skips or reconstruction drops, with its byte span in `events.jsonl`. */
export interface LineProblem {
  readonly offset: number
  readonly length: number
  readonly reason: string
}

/** What a read-only rescan of `events.jsonl` found. */
export interface SessionScan {
  /** Bytes scanned: the file size when the scan started. */
  readonly fileLen: number
  /** The turn number the scan's first turn gets, as `open` would number it. */
  readonly turnBase: number
  readonly state: LogState
  /** Closed entries plus the open one, as `open` would persist them, column by column. */
  readonly table: TurnTable
  readonly lines: number
  readonly blankLines: number
  readonly firstTimestamp: string | undefined
  /** The unterminated last line, if the file does not end with `\n`. */
  readonly tornTail: LineProblem | undefined
  readonly malformed: ReadonlyArray<LineProblem>
  readonly malformedCount: number
  readonly undecodable: ReadonlyArray<LineProblem>
  readonly undecodableCount: number
}

/** Options of the read-only scans. */
export interface InspectOptions {
  /** Rescan even when the stored metadata looks trustworthy (`verify` always does). */
  readonly forceScan?: boolean | undefined
  /** Called now and then with bytes scanned and the total, for progress on a terminal. */
  readonly onProgress?: ((bytes: number, total: number) => void) | undefined
  /**
   * `false`: a rescan only classifies lines (what the turn index needs) and does not fully decode
   * every line to report problems, so its blank, malformed and undecodable counts and lists stay
   * empty and `tornTail` unset. For readers that need only the effective manifest and index (the
   * search build); default true.
   */
  readonly problems?: boolean | undefined
  /**
   * With `problems: false`, called with every line a rescan reads and its classification (one
   * parse shared with the scan), so a reader that needs every line too reads the log once. Not
   * called when no rescan runs (`scan` undefined in the result).
   */
  readonly onLine?: ((line: RawLine, classified: Classified) => void) | undefined
  /** `false`: the lock is not probed and `live` is false (a reader that never looks at it); default true. */
  readonly probeLock?: boolean | undefined
}

const PROGRESS_STEP = 8 * 1024 * 1024

/** The problem-reporting part of the inspector's fold; the lifecycle part is domain's `LogScan`. */
interface Problems {
  blankLines: number
  malformedCount: number
  undecodableCount: number
  tornTail: LineProblem | undefined
  readonly malformed: Array<LineProblem>
  readonly undecodable: Array<LineProblem>
}

const noteProblems = (p: Problems, offset: number, bytes: Uint8Array, check: LineCheck): void => {
  const length = bytes.length
  if (bytes[length - 1] !== 10) {
    p.tornTail = {
      offset,
      length,
      reason: check._tag === "Malformed"
        ? `an incomplete record, skipped by the scan (${check.reason})`
        : check._tag === "Blank"
        ? "whitespace only"
        : "a record without its newline, counted by the scan"
    }
    // Reported once, as the torn tail; after the next open's repair it is an ordinary malformed line.
    if (check._tag === "Malformed") return
  }
  if (check._tag === "Blank") {
    p.blankLines++
  } else if (check._tag === "Malformed") {
    p.malformedCount++
    if (p.malformed.length < MAX_REPORTED_LINES) p.malformed.push({ offset, length, reason: check.reason })
  } else if (check._tag === "Undecodable") {
    p.undecodableCount++
    if (p.undecodable.length < MAX_REPORTED_LINES) {
      p.undecodable.push({ offset, length, reason: `${check.type}: ${check.reason}` })
    }
  }
}

const scanEvents = <E, R>(
  lines: Stream.Stream<RawLine, E, R>,
  fileLen: number,
  input: RescanInput,
  now: string,
  onProgress: ((bytes: number, total: number) => void) | undefined,
  withProblems: boolean,
  onLine: InspectOptions["onLine"]
): Effect.Effect<SessionScan, E, R> =>
  Effect.gen(function*() {
    const from = provisionalTurnBase(input)
    const problems: Problems = {
      blankLines: 0,
      malformedCount: 0,
      undecodableCount: 0,
      tornTail: undefined,
      malformed: [],
      undecodable: []
    }
    let scan: LogScan = emptyLogScan(from)
    let lastReport = 0
    if (fileLen > 0) {
      yield* lines.pipe(
        Stream.runForEachArray((batch) =>
          Effect.sync(() => {
            for (const line of batch) {
              let cls: LineClass
              if (withProblems) {
                // One parse per line: the classifier's JSON value also gives the full decoding.
                const both = classifyAndDecodeLine(line.bytes)
                cls = both.cls
                noteProblems(problems, line.offset, line.bytes, checkClassified(line.bytes, cls, both.decoded))
              } else if (onLine !== undefined) {
                const classified = classifyWithValue(line.bytes)
                cls = classified.cls
                onLine(line, classified)
              } else cls = classifyLine(line.bytes)
              // The next open terminates an unterminated last line first, so its span gains that byte.
              const end = line.offset + line.bytes.length + (line.bytes[line.bytes.length - 1] === 10 ? 0 : 1)
              scan = scanLine(scan, cls, { start: line.offset, end }, now)
              if (onProgress !== undefined && end - lastReport >= PROGRESS_STEP) {
                lastReport = end
                onProgress(end, fileLen)
              }
            }
          })
        )
      )
      if (onProgress !== undefined) onProgress(fileLen, fileLen)
    }
    const turnBase = rescanTurnBase(input, scan)
    const rebased = rebaseLogScan(scan, from, turnBase)
    return {
      fileLen,
      turnBase,
      state: rebased.log,
      table: scanEntries(rebased),
      lines: rebased.lines,
      blankLines: problems.blankLines,
      firstTimestamp: rebased.firstTimestamp,
      tornTail: problems.tornTail,
      malformed: problems.malformed,
      malformedCount: problems.malformedCount,
      undecodable: problems.undecodable,
      undecodableCount: problems.undecodableCount
    }
  })

/** Everything known about a session's log and metadata, wherever they were read from. */
export interface InspectedSession {
  /** The directory name (the session's identity in listings). */
  readonly name: string
  readonly eventsPresent: boolean
  /** Size of `events.jsonl` when inspected (0 when missing). */
  readonly fileLen: number
  readonly manifest: Stored<Manifest>
  readonly index: Stored<ReadonlyArray<TurnEntry>>
  readonly marker: Stored<PendingCapRewrite>
  /** Whether some process holds `session.lock`. */
  readonly live: boolean
  /**
   * Whether the stored manifest and index describe the log exactly as it is (the conditions of
   * `open`'s fast path); when false the effective view comes from a rescan.
   */
  readonly fresh: boolean
  /** The manifest an `open` would arrive at (stored when fresh, rebuilt otherwise). */
  readonly effectiveManifest: Manifest
  /**
   * The turn index an `open` would arrive at (retained entries; an open turn last).
   *
   * **Gotchas**: one object per turn, built on first access when the index came from the binary
   * sidecar; readers that need a few entries use {@link InspectedSession.effectiveTable}.
   */
  readonly effectiveEntries: ReadonlyArray<TurnEntry>
  /** The same index column by column (a view of the sidecar or of the entries; no copy). */
  readonly effectiveTable: TurnTable
  /** The stored `index/turns.json` column by column, when it is present (from its sidecar when that is current). */
  readonly indexTable: TurnTable | undefined
  /** The rescan, when one ran (stale metadata or `forceScan`). */
  readonly scan: SessionScan | undefined
}

/** Everything known about a session directory without writing to it. */
export interface SessionInspection extends InspectedSession {
  readonly paths: SessionPaths
}

/**
 * A session's log and metadata as read from wherever they are kept (a session directory, or the
 * fleet database): the stored metadata files, the log's length and last byte, and its lines.
 * `lines` yields every line of `[0, fileLen)` in order with its offset (trailing `\n` included
 * when present), in bounded memory; it is pulled only when a rescan is needed.
 */
export interface SessionSource<E, R> {
  readonly sessionId: string
  /** The directory name (the session's identity in listings). */
  readonly name: string
  readonly live: boolean
  readonly eventsPresent: boolean
  readonly fileLen: number
  /** Whether the log is empty or ends with `\n` (else the next open terminates a torn tail). */
  readonly endsWithNewline: boolean
  /** When the log last changed (RFC 3339), standing in for "now" in a rebuilt manifest. */
  readonly mtime: string
  readonly manifest: Stored<Manifest>
  readonly index: Stored<ReadonlyArray<TurnEntry>>
  readonly marker: Stored<PendingCapRewrite>
  readonly lines: Stream.Stream<RawLine, E, R>
  /**
   * The stored index column by column from a current binary sidecar, when the source has one
   * (then `index` is its lazily materialised view and is trusted as `open`'s fast path would).
   */
  readonly sidecarTable?: TurnTable | undefined
}

/**
 * Decodes a metadata file's bytes (`undefined` when the file is absent) as `Stored`: what
 * inspection reads from a directory, available to other sources of the same bytes.
 */
export const decodeStored = <A>(
  bytes: Uint8Array | undefined,
  decode: (text: string) => Result.Result<A, Schema.SchemaError>
): Stored<A> => {
  if (bytes === undefined) return { _tag: "Missing" }
  const decoded = decode(lenient.decode(bytes))
  return Result.isSuccess(decoded)
    ? { _tag: "Present", value: decoded.success }
    : { _tag: "Invalid", reason: oneLine(decoded.failure.message) }
}

/** A source with what a rescan would start from and whether the stored metadata can be trusted. */
interface Loaded<E, R> {
  readonly source: SessionSource<E, R>
  /** What a rescan by the next open would start from (its length includes the torn-tail repair). */
  readonly rescan: RescanInput
  /** The stored index column by column, when present. */
  readonly indexTable: TurnTable | undefined
  /** The stored metadata, when it passes `open`'s fast-path checks. */
  readonly freshView: View | undefined
}
/** A manifest and the turn index that goes with it. */
interface View {
  readonly manifest: Manifest
  readonly table: TurnTable
  /** The entries the table views, when they exist as objects already. */
  readonly entries?: ReadonlyArray<TurnEntry> | undefined
}

/** `Present` whose value is materialised from `table` on first access, once. */
const presentFromTable = (table: TurnTable): Stored<ReadonlyArray<TurnEntry>> => {
  let entries: ReadonlyArray<TurnEntry> | undefined
  return {
    _tag: "Present",
    get value() {
      entries ??= entriesOf(table)
      return entries
    }
  }
}

/**
 * The stored index from its binary sidecar, when the manifest passes the fast-path checks and
 * the sidecar is the exact copy of `turns.json` and valid and consistent for this log; else
 * undefined (the caller decodes `turns.json`). Decodes no JSON.
 */
const sidecarIndex = (
  paths: SessionPaths,
  manifest: Manifest | undefined,
  marker: PendingCapRewrite | undefined,
  openLen: number
) =>
  Effect.gen(function*() {
    if (manifest === undefined || !isManifestTrusted(manifest, marker, openLen)) return undefined
    const fs = yield* SessionFs
    // A sidecar that cannot be read is merely not used: turns.json is read (and reported) instead.
    const table = yield* Effect.orElseSucceed(
      loadTurnIndexSidecar(fs, paths.turnsSidecar, paths.turns, openLen),
      () => undefined
    )
    return table !== undefined && isTableValid(table, openLen) && isTableConsistent(table, manifest)
      ? table
      : undefined
  })

const prepare = <E, R>(source: SessionSource<E, R>): Loaded<E, R> => {
  const openLen = repairedLength(source.fileLen, source.endsWithNewline)
  const storedManifest = presentOrUndefined(source.manifest)
  const storedMarker = presentOrUndefined(source.marker)
  const fromSidecar = source.sidecarTable
  const storedEntries = fromSidecar !== undefined ? undefined : presentOrUndefined(source.index)
  const indexTable = fromSidecar ?? (storedEntries === undefined ? undefined : turnTableOf(storedEntries))
  const freshView: View | undefined = storedManifest !== undefined && fromSidecar !== undefined
    ? { manifest: storedManifest, table: fromSidecar }
    : storedManifest !== undefined && storedEntries !== undefined &&
        isStoredMetadataTrusted(storedManifest, storedEntries, storedMarker, openLen)
    ? { manifest: storedManifest, table: turnTableOf(storedEntries), entries: storedEntries }
    : undefined
  // The sidecar is only used when the manifest is trusted, where the turn base comes from the
  // manifest unless it lacks `retained_turn_base` (the only case that needs the entries).
  const rescanEntries = fromSidecar === undefined
    ? storedEntries
    : storedManifest?.retained_turn_base === undefined
    ? entriesOf(fromSidecar)
    : undefined
  return {
    source,
    rescan: {
      manifest: storedManifest,
      entries: rescanEntries,
      marker: matchingMarker(storedMarker, openLen),
      fileLen: openLen
    },
    indexTable,
    freshView
  }
}

const load = (sessionsDir: string, sessionId: string, probeLock = true) =>
  Effect.gen(function*() {
    const fs = yield* SessionFs
    const paths = yield* findSession(sessionsDir, sessionId)
    const live = probeLock ? yield* isSessionLive(paths.dir) : false
    const manifest = yield* readStored(paths.manifest, decodeManifestText)
    const marker = yield* readStored(paths.marker, decodePendingCapRewriteText)
    const eventsInfo = yield* fs.lstat(paths.events)
    if (Option.isSome(eventsInfo) && eventsInfo.value.type !== "File") {
      return yield* new StoreIoError({
        operation: "Inspection.inspectSession",
        path: paths.events,
        code: eventsInfo.value.type === "SymbolicLink" ? "ELOOP" : "EINVAL",
        detail: `events.jsonl is a ${eventsInfo.value.type}, not a regular file; the store never follows links`
      })
    }
    const fileLen = Option.isSome(eventsInfo) ? eventsInfo.value.size : 0
    const lastByte = fileLen > 0 ? yield* fs.readRange(paths.events, fileLen - 1, fileLen) : undefined
    const endsWithNewline = lastByte === undefined || lastByte[0] === 10
    const openLen = repairedLength(fileLen, endsWithNewline)
    const sidecarTable = yield* sidecarIndex(paths, presentOrUndefined(manifest), presentOrUndefined(marker), openLen)
    const index = sidecarTable !== undefined
      ? presentFromTable(sidecarTable)
      : yield* readStored(paths.turns, decodeTurnIndexText)
    const source: SessionSource<StoreIoError, never> = {
      sessionId,
      name: sessionDirName(sessionId),
      live,
      eventsPresent: Option.isSome(eventsInfo),
      fileLen,
      endsWithNewline,
      mtime: Option.isSome(eventsInfo) ? formatRfc3339(Math.trunc(eventsInfo.value.mtimeMs)) : "",
      manifest,
      index,
      marker,
      lines: fileLen > 0 ? fs.stream(paths.events, { start: 0, end: fileLen }).pipe(splitLines(0)) : Stream.empty,
      sidecarTable
    }
    return { paths, loaded: prepare(source) }
  })

const scanLoaded = <E, R>(
  loaded: Loaded<E, R>,
  onProgress: InspectOptions["onProgress"],
  withProblems = true,
  onLine: InspectOptions["onLine"] = undefined
) =>
  Effect.flatMap(
    Clock.currentTimeMillis,
    (nowMs) =>
      scanEvents(
        loaded.source.lines,
        loaded.source.fileLen,
        loaded.rescan,
        formatRfc3339(nowMs),
        onProgress,
        withProblems,
        onLine
      )
  )

/** The view `open` would rebuild from a rescan (domain's `rebuiltManifest`; the events' mtime stands in for "now"). */
const rebuiltView = <E, R>(loaded: Loaded<E, R>, scan: SessionScan) => {
  const manifest = rebuiltManifest(loaded.rescan.manifest, { log: scan.state, firstTimestamp: scan.firstTimestamp }, {
    sessionId: loaded.source.sessionId,
    fileLen: loaded.rescan.fileLen,
    turnBase: scan.turnBase,
    now: loaded.source.mtime
  })
  return { manifest, table: scan.table } satisfies View
}

/**
 * The inspection of a loaded session, given the view it arrives at, with `extra` fields (a
 * directory's paths). **Gotchas**: built field by field, never spread, so `effectiveEntries`
 * stays lazy.
 */
const assemble = <E, R, X extends object>(
  loaded: Loaded<E, R>,
  view: View,
  scan: SessionScan | undefined,
  extra: X
): InspectedSession & X => {
  let entries = view.entries
  return {
    ...extra,
    name: loaded.source.name,
    eventsPresent: loaded.source.eventsPresent,
    fileLen: loaded.source.fileLen,
    manifest: loaded.source.manifest,
    index: loaded.source.index,
    marker: loaded.source.marker,
    live: loaded.source.live,
    fresh: loaded.freshView !== undefined,
    effectiveManifest: view.manifest,
    get effectiveEntries() {
      entries ??= entriesOf(view.table)
      return entries
    },
    effectiveTable: view.table,
    indexTable: loaded.indexTable,
    scan
  }
}

/** {@link inspectSource} on a prepared source. */
const inspectLoaded = <E, R, X extends object>(
  loaded: Loaded<E, R>,
  options: InspectOptions,
  extra: X
): Effect.Effect<InspectedSession & X, E, R> =>
  loaded.freshView !== undefined && options.forceScan !== true
    ? Effect.succeed(assemble(loaded, loaded.freshView, undefined, extra))
    : Effect.map(
      scanLoaded(loaded, options.onProgress, options.problems !== false, options.onLine),
      (scan) => assemble(loaded, loaded.freshView ?? rebuiltView(loaded, scan), scan, extra)
    )

/**
 * Inspects a session from any source of its log and metadata, as {@link inspectSession} does a
 * directory: the stored metadata when `open` would trust it, else a rescan of `source.lines`.
 */
export const inspectSource = <E, R>(
  source: SessionSource<E, R>,
  options: InspectOptions = {}
): Effect.Effect<InspectedSession, E, R> => inspectLoaded(prepare(source), options, {})

/**
 * Inspects an existing session read-only: loads the metadata with no-follow reads, probes the
 * lock, and rescans the log when the metadata cannot be trusted (or `forceScan`). The effective
 * manifest and index are what `EventLog.open` would arrive at (timestamps aside), its torn-tail
 * repair included.
 *
 * **Gotchas**: a live writer may append while this runs; the scan covers the bytes present when
 * it started, and a record being written at that instant shows up as a torn tail.
 */
export const inspectSession = Effect.fn("Inspection.inspectSession")(
  function*(sessionsDir: string, sessionId: string, options: InspectOptions = {}) {
    const { loaded, paths } = yield* load(sessionsDir, sessionId, options.probeLock !== false)
    const inspection: SessionInspection = yield* inspectLoaded(loaded, options, { paths })
    return inspection
  }
)

/**
 * Inspects with a forced rescan and returns both; what `verifySession` compares.
 *
 * **Gotchas**: reads the whole log; use {@link inspectSession} when the stored view suffices.
 */
export const inspectWithScan = Effect.fn("Inspection.inspectWithScan")(
  function*(sessionsDir: string, sessionId: string, options: Omit<InspectOptions, "forceScan"> = {}) {
    const { loaded, paths } = yield* load(sessionsDir, sessionId)
    const scan = yield* scanLoaded(loaded, options.onProgress)
    const inspection: SessionInspection = assemble(loaded, loaded.freshView ?? rebuiltView(loaded, scan), scan, {
      paths
    })
    return { inspection, scan }
  }
)
