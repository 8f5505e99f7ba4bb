/**
 * Read-only streams over a session's canonical `events.jsonl`: every retained record, one turn's
 * records, and a follower that keeps emitting records as a writer flushes them. Nothing here
 * opens the session through `EventLog` (which would lock it, repair a torn tail and publish
 * metadata); the file is only read, in bounded memory, and each line is judged with the
 * inspector's `checkLine`, so what counts as an event here is what the scan counts.
 */
import type { ThreadEvent, TurnEntry } from "@logbook/domain"
import { exactStoredEventText, locateTurnIn } from "@logbook/domain"
import type { RawLine, StoreIoError } from "@logbook/store"
import { makeLineSplitter, SessionFs, TurnEvicted, TurnNotFound } from "@logbook/store"
import type { Duration } from "effect"
import { Effect, Option, Stream } from "effect"
import type { InspectOptions, SessionInspection } from "./Inspection.ts"
import { checkLine, inspectSession } from "./Inspection.ts"

/**
 * One item of a log stream: a decoded `Event` with its byte span; a `Skipped` line — `malformed`
 * (the scan skips it), `undecodable` (counted, but reconstruction drops it) or `incomplete` (an
 * unterminated last line that is not a valid record); or, from the follower only, `Rewritten`
 * when the file became shorter than what was already read (a cap eviction replaced it).
 */
export type LogRecord =
  | {
    readonly _tag: "Event"
    readonly offset: number
    readonly length: number
    readonly schemaVersion: string
    readonly event: ThreadEvent
    /**
     * The line's own text of the event, present only when the canonical encoding of `event`
     * cannot be exact (a count beyond 2^53 − 1): what to print to show the stored digits.
     */
    readonly storedText?: string
  }
  | {
    readonly _tag: "Skipped"
    readonly offset: number
    readonly length: number
    readonly kind: "malformed" | "undecodable" | "incomplete"
    readonly reason: string
  }
  | { readonly _tag: "Rewritten"; readonly previousLength: number; readonly length: number }

/**
 * The record of one raw line as every reader here judges it (the inspector's `checkLine`);
 * undefined for a blank line. Exported for readers of lines kept elsewhere (a fleet's rows).
 */
export const logRecordOf = (line: RawLine): LogRecord | undefined => {
  const check = checkLine(line.bytes)
  const span = { offset: line.offset, length: line.bytes.length }
  const unterminated = line.bytes[line.bytes.length - 1] !== 10
  switch (check._tag) {
    case "Blank":
      return undefined
    case "Event": {
      const event = check.envelope.event
      const storedText = exactStoredEventText(event, line.bytes)
      return {
        _tag: "Event",
        ...span,
        schemaVersion: check.envelope.schema_version,
        event,
        ...(storedText === undefined ? {} : { storedText })
      }
    }
    case "Malformed":
      return unterminated
        ? {
          _tag: "Skipped",
          ...span,
          kind: "incomplete",
          reason: `unterminated last line, a write in progress or a torn tail (${check.reason})`
        }
        : { _tag: "Skipped", ...span, kind: "malformed", reason: check.reason }
    case "Undecodable":
      return { _tag: "Skipped", ...span, kind: "undecodable", reason: `${check.type}: ${check.reason}` }
  }
}

const recordsOf = (lines: ReadonlyArray<RawLine>): Array<LogRecord> => {
  const out: Array<LogRecord> = []
  for (const line of lines) {
    const record = logRecordOf(line)
    if (record !== undefined) out.push(record)
  }
  return out
}

/** Size of a regular file, 0 when it is missing (a session whose first bytes are not flushed yet). */
const fileSize = (path: string) =>
  SessionFs.use((fs) =>
    Effect.map(fs.lstat(path), (info) => Option.isSome(info) && info.value.type === "File" ? info.value.size : 0)
  )

/** Options of {@link readEventRecords}: the byte range `[start, end)` (default: the whole file as it is now). */
export interface ReadOptions {
  readonly start?: number | undefined
  readonly end?: number | undefined
  /**
   * Bytes per read (default: the file system's, 256 KiB). Every line of a chunk is decoded when
   * it arrives, so a reader that stops after a few records (one turn) reads small chunks.
   */
  readonly chunkSize?: number | undefined
}

/**
 * The records of `events.jsonl` (or of the byte range given), in file order, in bounded memory.
 * A missing file is an empty log. A final line without `\n` is judged like any other line (the
 * scan counts it when it is a valid record) and otherwise reported as `incomplete`.
 *
 * **Gotchas**: without `end` the read stops at the end of the file as it is when reached; a
 * writer appending meanwhile may leave its record as an `incomplete` tail — use
 * {@link followEventRecords} to watch a live session.
 */
export const readEventRecords = (
  eventsPath: string,
  options: ReadOptions = {}
): Stream.Stream<LogRecord, StoreIoError, SessionFs> =>
  Stream.unwrap(Effect.gen(function*() {
    const fs = yield* SessionFs
    const info = yield* fs.lstat(eventsPath)
    if (Option.isNone(info)) return Stream.empty
    const start = options.start ?? 0
    const range = {
      start,
      ...(options.end === undefined ? {} : { end: options.end }),
      ...(options.chunkSize === undefined ? {} : { chunkSize: options.chunkSize })
    }
    return fs.stream(eventsPath, range).pipe(
      Stream.mapAccum(
        () => makeLineSplitter(start),
        (splitter, chunk) => [splitter, recordsOf(splitter.push(chunk))] as const,
        { onHalt: (splitter) => recordsOf(splitter.end()) }
      )
    )
  }))

/** Options of {@link followEventRecords}. */
export interface FollowOptions {
  /** Byte offset to start at (default 0: the whole retained log first). */
  readonly start?: number | undefined
  /** How often to look for new bytes (default 200 ms). */
  readonly pollInterval?: Duration.Input | undefined
}

/** Default polling interval of {@link followEventRecords}. */
export const DEFAULT_FOLLOW_INTERVAL: Duration.Input = "200 millis"

/**
 * Emits the records already in `events.jsonl`, then keeps polling its size and emits every new
 * complete line as it is flushed, until interrupted. An unterminated last line is held back
 * until its `\n` arrives, so a record that is being written is never reported as damage. When
 * the file becomes shorter than what was read (a cap eviction replaced it with a suffix of
 * itself), a `Rewritten` record is emitted and following resumes at the new end.
 *
 * **Gotchas**: records appended between the last poll and a cap rewrite are not re-read after
 * the rewrite; re-read the whole log when that matters.
 */
export const followEventRecords = (
  eventsPath: string,
  options: FollowOptions = {}
): Stream.Stream<LogRecord, StoreIoError, SessionFs> =>
  Stream.unwrap(Effect.gen(function*() {
    const fs = yield* SessionFs
    const interval = options.pollInterval ?? DEFAULT_FOLLOW_INTERVAL
    let offset = options.start ?? 0
    let splitter = makeLineSplitter(offset)
    let resync = false
    const restartAt = (length: number): LogRecord => {
      const record: LogRecord = { _tag: "Rewritten", previousLength: offset, length }
      offset = length
      splitter = makeLineSplitter(length)
      resync = false
      return record
    }
    const poll: Stream.Stream<LogRecord, StoreIoError, SessionFs> = Stream.unwrap(
      Effect.map(fileSize(eventsPath), (size) => {
        if (resync || size < offset) return Stream.succeed(restartAt(size))
        if (size === offset) return Stream.empty
        return fs.stream(eventsPath, { start: offset, end: size }).pipe(
          Stream.map((chunk) => {
            offset += chunk.length
            return recordsOf(splitter.push(chunk))
          }),
          Stream.flattenIterable,
          // The file shrank while being read: a rewrite; start over at its new end on the next poll.
          Stream.catchIf(
            (error: StoreIoError) => error.code === "UNEXPECTED_EOF",
            () =>
              Stream.fromEffectDrain(Effect.sync(() => {
                resync = true
              }))
          )
        )
      })
    )
    return poll.pipe(Stream.concat(Stream.fromEffectDrain(Effect.sleep(interval))), Stream.forever)
  }))

/** One turn located for reading: the inspection that found it, its index entry, and its records. */
export interface TurnRecords {
  readonly inspection: SessionInspection
  readonly entry: TurnEntry
  readonly records: Stream.Stream<LogRecord, StoreIoError, SessionFs>
}

/**
 * Locates turn `turn` of an existing session without writing to it (stored index when it is
 * trustworthy, a read-only rescan otherwise) and streams the records of its byte span. Fails
 * `TurnEvicted` for a turn below the first retained one, `TurnNotFound` for any other number the
 * index lacks, and `SessionNotFound` when the session does not exist.
 */
export const readTurn = Effect.fn("EventStream.readTurn")(
  function*(sessionsDir: string, sessionId: string, turn: number, options: Omit<InspectOptions, "forceScan"> = {}) {
    const inspection = yield* inspectSession(sessionsDir, sessionId, options)
    const located = locateTurnIn(
      inspection.effectiveTable,
      inspection.effectiveManifest.retained_turn_base ?? 1,
      turn
    )
    if (located._tag === "Evicted") {
      return yield* new TurnEvicted({ session: sessionId, turn, retainedTurnBase: located.retainedTurnBase })
    }
    if (located._tag === "NeverExisted") return yield* new TurnNotFound({ session: sessionId, turn })
    const entry = located.entry
    // An unterminated last record's entry ends one byte past the file (the next open's repair).
    const end = Math.min(entry.end_offset, inspection.fileLen)
    const records = readEventRecords(inspection.paths.events, { start: entry.start_offset, end })
    return { inspection, entry, records } satisfies TurnRecords
  }
)
