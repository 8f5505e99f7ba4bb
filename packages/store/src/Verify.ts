/**
 * Read-only inspection of a session directory: what the stored metadata says, what a rescan of
 * `events.jsonl` finds, and where the two disagree. Inspection tools (the CLI's `show`, `turn`,
 * `verify`) use this instead of `EventLog.open`, which would take the lock, terminate a torn tail
 * and publish metadata — writes that an inspector must not make, least of all while a live
 * writer is mid-record. Nothing here creates, repairs or locks anything.
 *
 * The rescan folds every line through the same classifier and lifecycle reducer as the store's
 * own scan (docs/log.md#rescan, docs/log.md#lifecycle), so its counters and turn index are exactly what the next open
 * would rebuild; on top it fully decodes every counted line to find records that turn
 * reconstruction would silently drop.
 */
import type {
  LifecycleKind,
  LogState,
  Manifest,
  PendingCapRewrite,
  TurnEntry,
  VersionedThreadEvent
} from "@logbook/domain"
import {
  applyLifecycleEvent,
  classifyLine,
  decodeLineText,
  decodeManifestText,
  decodePendingCapRewriteText,
  decodeTurnIndexText,
  eventTimestamp,
  inferTurnBase,
  initialLogState,
  isIndexConsistent,
  isIndexValid,
  sessionDirName
} from "@logbook/domain"
import { Clock, Effect, Option, Result, Schema, Stream } from "effect"
import { join } from "node:path"
import { isoFromMillis } from "./internal/time.ts"
import { splitLines } from "./LineSplitter.ts"
import { isSessionLive } from "./Liveness.ts"
import { SessionFs } from "./SessionFs.ts"
import type { SessionPaths } from "./SessionPaths.ts"
import { sessionPaths } from "./SessionPaths.ts"
import { StoreIoError } from "./StoreError.ts"

/** A session asked for by id has no directory below the sessions root. */
export class SessionNotFound extends Schema.TaggedError<SessionNotFound>()("SessionNotFound", {
  session: Schema.String,
  sessionsDir: Schema.String
}) {
  override get message(): string {
    return `session ${this.session} not found in ${this.sessionsDir}`
  }
}

/**
 * Resolves an existing session: its directory (`sessionDirName(id)`, so a directory name from a
 * listing works too) must be a real directory directly below the root. Never creates anything.
 * A symlink in its place is refused with `ELOOP` rather than followed.
 */
export const findSession = Effect.fn("Verify.findSession")(function*(sessionsDir: string, sessionId: string) {
  const fs = yield* SessionFs
  const paths = sessionPaths(sessionsDir, sessionId)
  const info = yield* fs.lstat(paths.dir)
  if (Option.isNone(info) || info.value.type === "File" || info.value.type === "Other") {
    return yield* new SessionNotFound({ session: sessionId, sessionsDir: paths.sessionsDir })
  }
  if (info.value.type === "SymbolicLink") {
    return yield* new StoreIoError({
      operation: "Verify.findSession",
      path: paths.dir,
      code: "ELOOP",
      detail: "the session directory is a symbolic link; the store never follows links"
    })
  }
  return paths
})

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

/**
 * Classifies one line (bytes with or without the trailing `\n`). The `Malformed`/`Event` split
 * is exactly `classifyLine`'s Skip/Counted; reasons are computed only for bad lines.
 */
export const checkLine = (bytes: Uint8Array): LineCheck => {
  const cls = classifyLine(bytes)
  if (cls._tag === "Skip") {
    if (lenient.decode(bytes).trim().length === 0) return { _tag: "Blank" }
    return { _tag: "Malformed", reason: malformedReason(bytes) }
  }
  if (cls.envelope !== undefined) return { _tag: "Event", envelope: cls.envelope, lifecycle: cls.lifecycle }
  const decoded = decodeLineText(lenient.decode(bytes).trim())
  return Result.isSuccess(decoded)
    ? { _tag: "Event", envelope: decoded.success, lifecycle: cls.lifecycle }
    : { _tag: "Undecodable", type: cls.type, lifecycle: cls.lifecycle, reason: oneLine(decoded.failure.message) }
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
  /** The turn number the scan started from (`inferTurnBase`, as `open` would). */
  readonly turnBase: number
  readonly state: LogState
  /** Closed entries plus the open one, as `open` would persist them. */
  readonly entries: ReadonlyArray<TurnEntry>
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
}

const PROGRESS_STEP = 8 * 1024 * 1024

const scanEvents = (
  path: string,
  fileLen: number,
  turnBase: number,
  now: string,
  onProgress: ((bytes: number, total: number) => void) | undefined
): Effect.Effect<SessionScan, StoreIoError, SessionFs> =>
  Effect.gen(function*() {
    const fs = yield* SessionFs
    const closed: Array<TurnEntry> = []
    const malformed: Array<LineProblem> = []
    const undecodable: Array<LineProblem> = []
    let state = initialLogState(turnBase)
    let lines = 0
    let blankLines = 0
    let malformedCount = 0
    let undecodableCount = 0
    let firstTimestamp: string | undefined
    let tornTail: LineProblem | undefined
    let lastReport = 0
    if (fileLen > 0) {
      yield* fs.stream(path, { start: 0, end: fileLen }).pipe(
        splitLines(0),
        Stream.runForEachArray((batch) =>
          Effect.sync(() => {
            for (const line of batch) {
              lines++
              const span = { start: line.offset, end: line.offset + line.bytes.length }
              const check = checkLine(line.bytes)
              if (line.bytes[line.bytes.length - 1] !== 10) {
                tornTail = {
                  offset: line.offset,
                  length: line.bytes.length,
                  reason: check._tag === "Malformed"
                    ? `an incomplete record, skipped by the scan (${check.reason})`
                    : check._tag === "Blank"
                    ? "whitespace only"
                    : "a record without its newline, counted by the scan"
                }
                // Reported once, as the torn tail; after the next open's repair it is an ordinary malformed line.
                if (check._tag === "Malformed") continue
              }
              if (check._tag === "Blank") {
                blankLines++
                continue
              }
              if (check._tag === "Malformed") {
                malformedCount++
                if (malformed.length < MAX_REPORTED_LINES) {
                  malformed.push({ offset: line.offset, length: line.bytes.length, reason: check.reason })
                }
                continue
              }
              if (check._tag === "Undecodable") {
                undecodableCount++
                if (undecodable.length < MAX_REPORTED_LINES) {
                  undecodable.push({
                    offset: line.offset,
                    length: line.bytes.length,
                    reason: `${check.type}: ${check.reason}`
                  })
                }
              }
              let ts = now
              if (check._tag === "Event" && check.lifecycle === "turn_started") {
                const recorded = eventTimestamp(check.envelope.event)
                if (recorded !== undefined) ts = recorded
                if (firstTimestamp === undefined) firstTimestamp = recorded
              }
              const t = applyLifecycleEvent(state, check.lifecycle, span, ts)
              state = t.state
              if (t.closed !== undefined) closed.push(t.closed)
              if (onProgress !== undefined && span.end - lastReport >= PROGRESS_STEP) {
                lastReport = span.end
                onProgress(span.end, fileLen)
              }
            }
          })
        )
      )
      if (onProgress !== undefined) onProgress(fileLen, fileLen)
    }
    const entries = state.open === undefined ? closed : [...closed, state.open]
    return {
      fileLen,
      turnBase,
      state,
      entries,
      lines,
      blankLines,
      firstTimestamp,
      tornTail,
      malformed,
      malformedCount,
      undecodable,
      undecodableCount
    }
  })

/** Everything known about a session without writing to it. */
export interface SessionInspection {
  readonly paths: SessionPaths
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
  /** The turn index an `open` would arrive at (retained entries; an open turn last). */
  readonly effectiveEntries: ReadonlyArray<TurnEntry>
  /** The rescan, when one ran (stale metadata or `forceScan`). */
  readonly scan: SessionScan | undefined
}

const isFresh = (
  manifest: Manifest | undefined,
  entries: ReadonlyArray<TurnEntry> | undefined,
  markerMatches: boolean,
  fileLen: number
): boolean =>
  manifest !== undefined && entries !== undefined && !markerMatches && manifest.in_turn !== undefined &&
  manifest.persisted_file_len === fileLen && isIndexValid(entries, fileLen) && isIndexConsistent(entries, manifest)

/** What was read from disk before any scan. */
interface Loaded {
  readonly sessionId: string
  readonly paths: SessionPaths
  readonly name: string
  readonly live: boolean
  readonly eventsPresent: boolean
  readonly fileLen: number
  readonly mtime: string
  readonly manifest: Stored<Manifest>
  readonly index: Stored<ReadonlyArray<TurnEntry>>
  readonly marker: Stored<PendingCapRewrite>
  readonly turnBase: number
  /** The stored metadata, when it passes `open`'s fast-path checks. */
  readonly freshView: { readonly manifest: Manifest; readonly entries: ReadonlyArray<TurnEntry> } | undefined
}

const load = (sessionsDir: string, sessionId: string) =>
  Effect.gen(function*() {
    const fs = yield* SessionFs
    const paths = yield* findSession(sessionsDir, sessionId)
    const live = yield* isSessionLive(paths.dir)
    const manifest = yield* readStored(paths.manifest, decodeManifestText)
    const index = yield* readStored(paths.turns, decodeTurnIndexText)
    const marker = yield* readStored(paths.marker, decodePendingCapRewriteText)
    const eventsInfo = yield* fs.lstat(paths.events)
    if (Option.isSome(eventsInfo) && eventsInfo.value.type !== "File") {
      return yield* new StoreIoError({
        operation: "Verify.inspectSession",
        path: paths.events,
        code: eventsInfo.value.type === "SymbolicLink" ? "ELOOP" : "EINVAL",
        detail: `events.jsonl is a ${eventsInfo.value.type}, not a regular file; the store never follows links`
      })
    }
    const fileLen = Option.isSome(eventsInfo) ? eventsInfo.value.size : 0
    const storedManifest = presentOrUndefined(manifest)
    const storedEntries = presentOrUndefined(index)
    const storedMarker = presentOrUndefined(marker)
    const matching = storedMarker !== undefined && storedMarker.new_file_len === fileLen &&
        storedMarker.new_file_len < storedMarker.previous_file_len
      ? storedMarker
      : undefined
    const freshView = storedManifest !== undefined && storedEntries !== undefined &&
        isFresh(storedManifest, storedEntries, matching !== undefined, fileLen)
      ? { manifest: storedManifest, entries: storedEntries }
      : undefined
    return {
      sessionId,
      paths,
      name: sessionDirName(sessionId),
      live,
      eventsPresent: Option.isSome(eventsInfo),
      fileLen,
      mtime: Option.isSome(eventsInfo) ? isoFromMillis(Math.trunc(eventsInfo.value.mtimeMs)) : "",
      manifest,
      index,
      marker,
      turnBase: inferTurnBase(storedManifest, storedEntries, matching, fileLen),
      freshView
    } satisfies Loaded
  })

const scanLoaded = (loaded: Loaded, onProgress: InspectOptions["onProgress"]) =>
  Effect.flatMap(
    Clock.currentTimeMillis,
    (nowMs) => scanEvents(loaded.paths.events, loaded.fileLen, loaded.turnBase, isoFromMillis(nowMs), onProgress)
  )

/** The view `open` would rebuild from a rescan: counters from the scan, identity and times kept from the manifest. */
const rebuiltView = (loaded: Loaded, scan: SessionScan) => {
  const stored = presentOrUndefined(loaded.manifest)
  const manifest: Manifest = {
    session_id: stored?.session_id ?? loaded.sessionId,
    schema_version: stored?.schema_version ?? 1,
    created_at: stored !== undefined && stored.created_at !== ""
      ? stored.created_at
      : (scan.firstTimestamp ?? loaded.mtime),
    updated_at: stored?.updated_at ?? loaded.mtime,
    turn_count: scan.state.turnCount,
    event_count: scan.state.eventCount,
    status: scan.state.status,
    in_turn: scan.state.inTurn,
    persisted_file_len: loaded.fileLen,
    retained_turn_base: loaded.turnBase
  }
  return { manifest, entries: scan.entries }
}

const assemble = (
  loaded: Loaded,
  view: { readonly manifest: Manifest; readonly entries: ReadonlyArray<TurnEntry> },
  scan: SessionScan | undefined
): SessionInspection => ({
  paths: loaded.paths,
  name: loaded.name,
  eventsPresent: loaded.eventsPresent,
  fileLen: loaded.fileLen,
  manifest: loaded.manifest,
  index: loaded.index,
  marker: loaded.marker,
  live: loaded.live,
  fresh: loaded.freshView !== undefined,
  effectiveManifest: view.manifest,
  effectiveEntries: view.entries,
  scan
})

/**
 * Inspects an existing session read-only: loads the metadata with no-follow reads, probes the
 * lock, and rescans the log when the metadata cannot be trusted (or `forceScan`). The effective
 * manifest and index are what `EventLog.open` would arrive at, minus its repairs.
 *
 * **Gotchas**: a live writer may append while this runs; the scan covers the bytes present when
 * it started, and a record being written at that instant shows up as a torn tail.
 */
export const inspectSession = Effect.fn("Verify.inspectSession")(
  function*(sessionsDir: string, sessionId: string, options: InspectOptions = {}) {
    const loaded = yield* load(sessionsDir, sessionId)
    if (loaded.freshView !== undefined && options.forceScan !== true) {
      return assemble(loaded, loaded.freshView, undefined)
    }
    const scan = yield* scanLoaded(loaded, options.onProgress)
    return assemble(loaded, loaded.freshView ?? rebuiltView(loaded, scan), scan)
  }
)

/** The kinds of problem `verifySession` reports. */
export type FindingKind =
  | "torn-tail"
  | "malformed-lines"
  | "undecodable-lines"
  | "events-missing"
  | "manifest-missing"
  | "manifest-invalid"
  | "manifest-mismatch"
  | "index-missing"
  | "index-invalid"
  | "index-out-of-bounds"
  | "index-inconsistent"
  | "index-mismatch"
  | "pending-cap-rewrite"

/** One problem found by `verifySession`, described for a person. */
export interface Finding {
  readonly kind: FindingKind
  readonly message: string
}

/** The result of `verifySession`: the inspection with its forced rescan, and every finding. */
export interface VerifyReport {
  readonly inspection: SessionInspection
  readonly scan: SessionScan
  readonly findings: ReadonlyArray<Finding>
}

const sameSpan = (a: TurnEntry, b: TurnEntry): boolean =>
  a.turn_number === b.turn_number && a.start_offset === b.start_offset && a.end_offset === b.end_offset &&
  a.event_count === b.event_count

const describeEntry = (e: TurnEntry | undefined): string =>
  e === undefined
    ? "no entry"
    : `turn ${e.turn_number} [${e.start_offset}, ${e.end_offset}) with ${e.event_count} events`

/** The findings for an inspection and its rescan; pure. */
export const compareWithScan = (inspection: SessionInspection, scan: SessionScan): ReadonlyArray<Finding> => {
  const findings: Array<Finding> = []
  const add = (kind: FindingKind, message: string) => findings.push({ kind, message })
  if (scan.tornTail !== undefined) {
    add(
      "torn-tail",
      `events.jsonl ends with an unterminated line at byte ${scan.tornTail.offset} (${scan.tornTail.length} bytes: ` +
        `${scan.tornTail.reason}); the next open terminates it with a newline`
    )
  }
  if (scan.malformedCount > 0) {
    const first = scan.malformed.map((p) => `byte ${p.offset}: ${p.reason}`).slice(0, 3).join("; ")
    add(
      "malformed-lines",
      `${scan.malformedCount} line(s) are skipped by the scan (not counted): ${first}` +
        (scan.malformedCount > 3 ? "; ..." : "")
    )
  }
  if (scan.undecodableCount > 0) {
    const first = scan.undecodable.map((p) => `byte ${p.offset}: ${p.reason}`).slice(0, 3).join("; ")
    add(
      "undecodable-lines",
      `${scan.undecodableCount} counted line(s) do not decode and are dropped by turn reconstruction: ${first}` +
        (scan.undecodableCount > 3 ? "; ..." : "")
    )
  }
  const m = inspection.manifest
  if (
    !inspection.eventsPresent && m._tag === "Present" &&
    (m.value.event_count > 0 || (m.value.persisted_file_len ?? 0) > 0)
  ) {
    add("events-missing", `events.jsonl is missing but the manifest describes ${m.value.event_count} events`)
  }
  if (m._tag === "Missing") add("manifest-missing", "manifest.json is missing; the next open rebuilds it by rescanning")
  if (m._tag === "Invalid") add("manifest-invalid", `manifest.json is invalid (${m.reason})`)
  if (m._tag === "Present") {
    const stored = m.value
    const mismatch = (field: string, storedValue: unknown, scanned: unknown) => {
      if (storedValue !== scanned) {
        add(
          "manifest-mismatch",
          `manifest ${field} is ${JSON.stringify(storedValue) ?? "absent"} but the log gives ${JSON.stringify(scanned)}`
        )
      }
    }
    mismatch("persisted_file_len", stored.persisted_file_len, scan.fileLen)
    mismatch("event_count", stored.event_count, scan.state.eventCount)
    mismatch("turn_count", stored.turn_count, scan.state.turnCount)
    mismatch("status", stored.status, scan.state.status)
    mismatch("in_turn", stored.in_turn, scan.state.inTurn)
    mismatch("retained_turn_base", stored.retained_turn_base ?? 1, scan.turnBase)
  }
  const idx = inspection.index
  if (idx._tag === "Missing") {
    add("index-missing", "index/turns.json is missing; the next open rebuilds it by rescanning")
  }
  if (idx._tag === "Invalid") add("index-invalid", `index/turns.json is invalid (${idx.reason})`)
  if (idx._tag === "Present") {
    const entries = idx.value
    if (!isIndexValid(entries, scan.fileLen)) {
      add(
        "index-out-of-bounds",
        `index/turns.json has entries that overlap, are empty or end past the log's ${scan.fileLen} bytes`
      )
    }
    if (m._tag === "Present" && !isIndexConsistent(entries, m.value)) {
      add(
        "index-inconsistent",
        `index/turns.json turn numbers (${entries[0]?.turn_number ?? "none"}..${
          entries.at(-1)?.turn_number ?? "none"
        }) do not match the manifest (retained_turn_base ${
          m.value.retained_turn_base ?? 1
        }, turn_count ${m.value.turn_count}, in_turn ${m.value.in_turn ?? "absent"})`
      )
    }
    const count = Math.max(entries.length, scan.entries.length)
    for (let i = 0; i < count; i++) {
      const a = entries[i]
      const b = scan.entries[i]
      if (a === undefined || b === undefined || !sameSpan(a, b)) {
        add(
          "index-mismatch",
          `index/turns.json entry ${i + 1} is ${describeEntry(a)} but the log gives ${describeEntry(b)} ` +
            `(stored ${entries.length} entries, log ${scan.entries.length})`
        )
        break
      }
    }
  }
  const marker = inspection.marker
  if (marker._tag !== "Missing") {
    add(
      "pending-cap-rewrite",
      "index/pending-cap-rewrite.json is present: a cap eviction was interrupted; the next open finishes the recovery"
    )
  }
  return findings
}

/**
 * Verifies a session without writing anything: rescans the whole log (torn tail, malformed and
 * undecodable lines with their offsets) and compares the result with `manifest.json` and
 * `index/turns.json` as stored — counters, `persisted_file_len`, index validity and consistency,
 * and the index entries themselves (ignoring `ts`). An empty `findings` means clean.
 *
 * **Gotchas**: on a live session (another process holds the lock) differences may be writes in
 * flight; `inspection.live` says so.
 */
export const verifySession = Effect.fn("Verify.verifySession")(
  function*(sessionsDir: string, sessionId: string, options: Omit<InspectOptions, "forceScan"> = {}) {
    const loaded = yield* load(sessionsDir, sessionId)
    const scan = yield* scanLoaded(loaded, options.onProgress)
    const inspection = assemble(loaded, loaded.freshView ?? rebuiltView(loaded, scan), scan)
    return { inspection, scan, findings: compareWithScan(inspection, scan) } satisfies VerifyReport
  }
)

/** Bytes and regular files below a session directory. */
export interface DiskUsage {
  readonly bytes: number
  readonly files: number
}

/** Sums the sizes of the regular files below `dir`, walking real directories only (links are not followed). */
export const diskUsage = Effect.fn("Verify.diskUsage")(function*(dir: string) {
  const fs = yield* SessionFs
  let bytes = 0
  let files = 0
  const pending = [dir]
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    for (const name of yield* fs.listDir(next)) {
      const path = join(next, name)
      const info = yield* fs.lstat(path)
      if (Option.isNone(info)) continue
      if (info.value.type === "File") {
        bytes += info.value.size
        files++
      } else if (info.value.type === "Directory") {
        pending.push(path)
      }
    }
  }
  return { bytes, files } satisfies DiskUsage
})
