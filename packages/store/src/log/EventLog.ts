/**
 * The canonical session event log: buffered appends of versioned ThreadEvents to
 * `events.jsonl`, the durability barrier at turn boundaries, cap eviction, turn reconstruction,
 * and snapshot streaming. Opening recovers from any crash by rescanning the log. The handle
 * decides when things happen; what the log means is domain's (`Lifecycle`, `LogScan`,
 * `TurnIndex`) and every change to the shared state is a transition of `internal/sessionState`.
 */
import type { CapBudgets, LifecycleKind, Manifest, ThreadEvent, TurnEntry } from "@logbook/domain"
import {
  classifyEncodedLine,
  decodeEvent,
  decodeLineText,
  DEFAULT_EVICTION_LOW_WATER,
  DEFAULT_MAX_BYTES,
  DEFAULT_MAX_EVENTS,
  encodeLine,
  entriesOf,
  eventTimestamp,
  formatRfc3339,
  isKnownEventType,
  locateTurnIn,
  scanLineText,
  skipReason
} from "@logbook/domain"
import { Clock, Duration, Effect, Option, Result, Schedule, Stream } from "effect"
import type { Scope } from "effect"
import { SessionFs } from "../fs/SessionFs.ts"
import type { CreateDirError } from "../fs/StoreError.ts"
import { StoreIoError } from "../fs/StoreError.ts"
import { InvalidEvent, SessionLocked, TurnEvicted, TurnNotFound } from "./EventLogError.ts"
import { enforceCap } from "./internal/capRewrite.ts"
import { ensureIndex } from "./internal/openSession.ts"
import { lineText } from "./internal/scan.ts"
import type { SessionState } from "./internal/sessionState.ts"
import {
  appendRecorded,
  completionRecorded,
  currentEntries,
  currentManifest,
  flushBytes,
  overBudget,
  persistMeta,
  usableFile
} from "./internal/sessionState.ts"
import { MAX_WRITE_BUFFER_BYTES } from "./internal/writeBuffer.ts"
import { splitLines } from "./LineSplitter.ts"
import type { RawLine } from "./LineSplitter.ts"
import type { SessionPaths } from "./SessionPaths.ts"
import { sessionPaths } from "./SessionPaths.ts"
import { SessionRegistry } from "./SessionRegistry.ts"
import type { SummaryHook, SummaryHookFailed } from "./SummaryHook.ts"
import { defaultSummaryHook } from "./SummaryHook.ts"

/** How to open a session's log. */
export interface OpenOptions {
  /** The sessions root (e.g. `<workspace>/.logbook/sessions`). */
  readonly sessionsDir: string
  /** The raw session id; its directory is `sessionDirName(sessionId)`. */
  readonly sessionId: string
  /** Fail with `SessionLocked` instead of opening when another process holds `session.lock`. */
  readonly requireExclusive?: boolean | undefined
  /** Run the durability barrier from a background fiber once bytes have waited this long (off by default; 0 is off). */
  readonly autoFlush?: Duration.Input | undefined
  /** Cap on retained events (default 10 000; 0 disables). */
  readonly maxEvents?: number | undefined
  /** Cap on the size of `events.jsonl` in bytes (default 64 MiB; 0 disables). */
  readonly maxBytes?: number | undefined
  /** Once a cap is exceeded, evict down to this fraction of each budget (default 0.9). */
  readonly evictionLowWater?: number | undefined
  /** Persists what an eviction removes before it happens (default: `derived/eviction-summary-<digest>.json`). */
  readonly summaryHook?: SummaryHook | undefined
  /** Called during a rescan with bytes scanned and the total (for progress on a terminal). */
  readonly onScanProgress?: ((bytes: number, total: number) => void) | undefined
  /**
   * Run the durability barrier at every turn boundary (default true). A bulk writer that flushes at
   * its end (an importer) turns it off: bytes still go to disk every 64 KiB, and a crash before the
   * final `flush` is recovered by the rescan on the next open, as for any stale manifest.
   */
  readonly barrierAtTurnBoundary?: boolean | undefined
}

/** Whether this process holds the session's liveness lock. */
export type LockState = "exclusive" | "held-elsewhere" | "unavailable"

/** The events of one turn in file order, and how many of its lines did not decode. */
export interface ReconstructedTurn {
  readonly turn: number
  readonly events: ReadonlyArray<ThreadEvent>
  readonly skipped: number
}

/** One line of a snapshot: its byte offset and its bytes including the trailing `\n`. */
export type SnapshotLine = RawLine

/** Errors an append can report. */
export type AppendError = StoreIoError | InvalidEvent | SummaryHookFailed

/** A handle on one session's log; all handles of a session in this process share one state. */
export interface SessionLog {
  readonly sessionId: string
  readonly paths: SessionPaths
  readonly lockState: LockState
  /**
   * Appends a typed event: a memory copy until a boundary.
   *
   * **Gotchas**: the event is durable only after a barrier (turn boundary, `thread.completed`,
   * `flush`, `complete`, close). When an append fails after the event was counted, treat it as
   * "possibly persisted".
   */
  readonly append: (event: ThreadEvent) => Effect.Effect<void, AppendError>
  /**
   * Appends a batch of typed events in order under one permit and one clock read, with the
   * validation, lifecycle rules, barriers and cap eviction of appending them one by one (the file
   * ends with the same bytes and the same turn index). Every event is serialised before any is
   * recorded: when one cannot be, nothing of the batch is recorded.
   *
   * **Gotchas**: bytes reach the file every 64 KiB, but one barrier at the end of the batch covers
   * every turn boundary in it (earlier only before a cap eviction, which runs at the event that
   * exceeds the budget, as with single appends). When an I/O failure interrupts a batch, the events before it count as
   * "possibly persisted" and the rest were not recorded.
   *
   * `onRecorded`, when given, is called with each event's index in the batch and the byte offset
   * its line starts at, as it is recorded (an importer folds what it wrote without reading it back).
   */
  readonly appendAll: (
    events: ReadonlyArray<ThreadEvent>,
    onRecorded?: (index: number, offset: number) => void
  ) => Effect.Effect<void, AppendError>
  /** Validates untrusted input as a ThreadEvent, then appends it; invalid input appends nothing. */
  readonly appendUnknown: (input: unknown) => Effect.Effect<ThreadEvent, AppendError>
  /** The durability barrier: bytes, fdatasync, turn index, manifest. */
  readonly flush: Effect.Effect<void, StoreIoError>
  /** Refreshes `updated_at` and runs the barrier; the status changes only through `thread.completed`. */
  readonly complete: Effect.Effect<void, StoreIoError>
  /** The events of turn `n` (an open turn included). */
  readonly reconstructTurn: (
    turn: number
  ) => Effect.Effect<ReconstructedTurn, TurnNotFound | TurnEvicted | StoreIoError>
  /**
   * Every retained line after a barrier, malformed ones included, streamed in bounded memory.
   *
   * **Gotchas**: appends on this session wait until the stream ends; consume it promptly.
   */
  readonly visitSnapshot: Stream.Stream<SnapshotLine, StoreIoError>
  /** The manifest describing the in-memory state (`persisted_file_len` = what is durable). */
  readonly manifest: Effect.Effect<Manifest, StoreIoError>
  /** The turn index (retained entries; the open turn last). */
  readonly turnIndex: Effect.Effect<ReadonlyArray<TurnEntry>, StoreIoError>
}

const lockStateOf = (s: SessionState): LockState =>
  s.lock._tag === "Acquired" ? "exclusive" : s.lock._tag === "HeldElsewhere" ? "held-elsewhere" : "unavailable"

/**
 * One typed event as the log will hold it: its line (without the newline: the buffer appends it,
 * which spares a concatenated copy of every line), the lifecycle kind the scan's classifier gives
 * that line, and for a `turn.started` the timestamp the scan reads from it.
 */
interface Recordable {
  readonly line: string
  readonly kind: LifecycleKind
  readonly recordedTs: string | undefined
}

const invalid = (detail: string): InvalidEvent => new InvalidEvent({ operation: "append", detail })

/**
 * Why the encoder threw on `event`: when the value is not a valid event (a host's cast), the
 * decoder's message naming the field; else the encoder's own refusal (a count it cannot write exactly).
 */
const encodeFailure = (event: ThreadEvent, cause: unknown): string => {
  const decoded = decodeEvent(event)
  if (Result.isFailure(decoded)) return `cannot serialise event: ${decoded.failure.message}`
  return cause instanceof RangeError ? cause.message : `cannot serialise event: ${String(cause)}`
}

/**
 * Serialises a typed event and decides what it records by classifying the encoded line with the
 * scan's own classifier (docs/log.md#classification), so memory and a rescan can never disagree:
 * a line the scan would skip, or would read as another type than the event declares, is refused
 * with `InvalidEvent` naming the field. A host's cast can reach here with any shape.
 *
 * **Gotchas**: on the hot path. An ordinary event costs one `JSON.stringify` and a prefix check
 * (`classifyEncodedLine`); only lifecycle lines (two per turn) are parsed and decoded again.
 */
const serialise = (event: ThreadEvent): Result.Result<Recordable, InvalidEvent> => {
  const declared: unknown = event.type === "unknown" ? event.original_type : event.type
  if (typeof declared !== "string" || (event.type !== "unknown" && !isKnownEventType(declared))) {
    return Result.fail(invalid(
      `type: ${String(JSON.stringify(declared))} is not an event type of the contract ` +
        `(an event of another type is { type: "unknown", original_type, fields }, or goes through appendUnknown)`
    ))
  }
  if (event.type === "unknown" && isKnownEventType(declared)) {
    return Result.fail(invalid(
      `original_type: "${declared}" is a contract type, which the log reads as that event, never as unknown`
    ))
  }
  const encoded = Result.try({ try: () => encodeLine(event), catch: (cause) => encodeFailure(event, cause) })
  if (Result.isFailure(encoded)) return Result.fail(invalid(encoded.failure))
  const line = encoded.success
  const cls = classifyEncodedLine(line, declared)
  if (cls._tag === "Skip") {
    return Result.fail(invalid(`a rescan would skip this line: ${skipReason(line) ?? "it is not an event"}`))
  }
  if (cls.type !== declared) {
    return Result.fail(invalid(`type: the line would read as "${cls.type}", not "${declared}"`))
  }
  const recordedTs = cls.envelope === undefined ? undefined : eventTimestamp(cls.envelope.event)
  return Result.succeed({ line, kind: cls.lifecycle, recordedTs })
}

/** Builds the handle operations over a shared state. */
const makeSessionLog = (
  s: SessionState,
  fs: SessionFs["Service"],
  budgets: CapBudgets,
  hook: SummaryHook,
  barrierAtTurnBoundary: boolean
): SessionLog => {
  // Every operation first finishes a fast-path open (loads and checks the turn index).
  const locked = <A, E>(effect: Effect.Effect<A, E>): Effect.Effect<A, E | StoreIoError> =>
    s.semaphore.withPermit(Effect.andThen(ensureIndex(fs, s), effect))

  /**
   * The synchronous part of an append: serialise into the buffer and step the reducer. It
   * returns the I/O still owed (barrier, byte flush, cap rewrite) or undefined when the append
   * is complete in memory — so the common append costs no effect machinery beyond the permit.
   */
  const appendNow = (
    event: ThreadEvent,
    nowMs: number
  ): Effect.Effect<void, AppendError> | undefined => {
    if (s.broken !== undefined || s.file === undefined) return Effect.asVoid(usableFile(s, "append"))
    const serialised = serialise(event)
    if (Result.isFailure(serialised)) return Effect.fail(serialised.failure)
    const { kind, line, recordedTs } = serialised.success
    const ts = kind === "turn_started" ? (recordedTs ?? formatRfc3339(nowMs)) : ""
    const boundary = appendRecorded(s, line, kind, nowMs, ts)
    let io: Effect.Effect<void, AppendError> | undefined
    if (boundary && barrierAtTurnBoundary) {
      io = persistMeta(s)
    } else if (s.buffer.length() >= MAX_WRITE_BUFFER_BYTES) {
      // Bytes only, no metadata: the manifest's stale persisted_file_len makes a crash rescan.
      io = flushBytes(s, false)
    }
    if (overBudget(s, budgets)) {
      const cap = Effect.asVoid(enforceCap(fs, s, budgets, hook))
      io = io === undefined ? cap : Effect.andThen(io, cap)
    }
    return io
  }

  const appendStep = (event: ThreadEvent): Effect.Effect<void, AppendError> =>
    Effect.clockWith((clock) => {
      const io = appendNow(event, clock.currentTimeMillisUnsafe())
      // Once I/O starts it runs to the end: an interrupt mid cap rewrite could leave the file closed.
      return io === undefined ? Effect.void : Effect.uninterruptible(io)
    })

  // The pending-index check outside the permit is only a shortcut: once loaded the index stays
  // loaded, and the slow path re-checks under the permit.
  const appendWithPermit = (event: ThreadEvent): Effect.Effect<void, AppendError> =>
    s.pendingIndex === undefined
      ? s.semaphore.withPermit(appendStep(event))
      : s.semaphore.withPermit(Effect.andThen(ensureIndex(fs, s), appendStep(event)))

  // Untraced on purpose: a traced Effect.fn costs more than the whole in-memory append (bench P1).
  const append = (event: ThreadEvent): Effect.Effect<void, AppendError> => appendWithPermit(event)

  /**
   * Records `lines[from..]` in memory until an event exceeds a budget or the buffer reaches
   * 64 KiB, then returns the I/O single appends would have run by then (the barrier before a cap
   * rewrite, the cap rewrite, or just the buffered bytes) followed by the rest of the batch; at
   * the end of the batch, the barrier when any boundary was recorded. Undefined when nothing is
   * owed. `boundary` carries a boundary recorded by an earlier part of the batch.
   */
  const appendBatchFrom = (
    lines: ReadonlyArray<Recordable>,
    from: number,
    nowMs: number,
    boundaryBefore: boolean,
    onRecorded: ((index: number, offset: number) => void) | undefined
  ): Effect.Effect<void, AppendError> | undefined => {
    if (s.broken !== undefined || s.file === undefined) return Effect.asVoid(usableFile(s, "append"))
    let boundary = boundaryBefore
    let capped = false
    let full = false
    let i = from
    while (i < lines.length && !capped && !full) {
      const line = lines[i]
      if (line === undefined) break
      const ts = line.kind === "turn_started" ? (line.recordedTs ?? formatRfc3339(nowMs)) : ""
      const start = s.nextOffset
      if (appendRecorded(s, line.line, line.kind, nowMs, ts) && barrierAtTurnBoundary) boundary = true
      onRecorded?.(i, start)
      capped = overBudget(s, budgets)
      full = s.buffer.length() >= MAX_WRITE_BUFFER_BYTES
      i++
    }
    const done = i >= lines.length
    let io: Effect.Effect<void, AppendError> | undefined
    // The barrier runs before a cap rewrite (as after a single boundary append) and at the end.
    if (boundary && (capped || done)) io = persistMeta(s)
    else if (full) io = flushBytes(s, false)
    if (capped) {
      const cap = Effect.asVoid(enforceCap(fs, s, budgets, hook))
      io = io === undefined ? cap : Effect.andThen(io, cap)
    }
    if (done) return io
    const next = i
    const pending = boundary && !capped
    const rest = Effect.suspend(() => appendBatchFrom(lines, next, nowMs, pending, onRecorded) ?? Effect.void)
    return io === undefined ? rest : Effect.andThen(io, rest)
  }

  const appendAll = (
    events: ReadonlyArray<ThreadEvent>,
    onRecorded?: (index: number, offset: number) => void
  ): Effect.Effect<void, AppendError> => {
    if (events.length === 0) return Effect.void
    // Serialise the whole batch first: an invalid event fails it before anything is recorded.
    const lines: Array<Recordable> = []
    for (const event of events) {
      const line = serialise(event)
      if (Result.isFailure(line)) {
        const detail = `event ${lines.length} of the batch: ${line.failure.detail}`
        return Effect.fail(new InvalidEvent({ operation: "appendAll", detail }))
      }
      lines.push(line.success)
    }
    const step = Effect.clockWith((clock) => {
      const io = appendBatchFrom(lines, 0, clock.currentTimeMillisUnsafe(), false, onRecorded)
      return io === undefined ? Effect.void : Effect.uninterruptible(io)
    })
    return s.pendingIndex === undefined
      ? s.semaphore.withPermit(step)
      : s.semaphore.withPermit(Effect.andThen(ensureIndex(fs, s), step))
  }

  const appendUnknown = Effect.fn("EventLog.appendUnknown")(function*(input: unknown) {
    const decoded = decodeEvent(input)
    if (Result.isFailure(decoded)) {
      return yield* new InvalidEvent({ operation: "appendUnknown", detail: decoded.failure.message })
    }
    yield* appendWithPermit(decoded.success)
    return decoded.success
  })

  const flush = locked(Effect.uninterruptible(persistMeta(s))).pipe(Effect.withSpan("EventLog.flush"))

  const complete = locked(Effect.gen(function*() {
    completionRecorded(s, yield* Clock.currentTimeMillis)
    yield* Effect.uninterruptible(persistMeta(s))
  })).pipe(Effect.withSpan("EventLog.complete"))

  const reconstructTurn = Effect.fn("EventLog.reconstructTurn")(function*(turn: number) {
    return yield* locked(Effect.gen(function*() {
      const located = locateTurnIn(currentEntries(s), s.retainedTurnBase, turn)
      if (located._tag === "Evicted") {
        return yield* new TurnEvicted({ session: s.sessionId, turn, retainedTurnBase: located.retainedTurnBase })
      }
      if (located._tag === "NeverExisted") return yield* new TurnNotFound({ session: s.sessionId, turn })
      const entry = located.entry
      yield* flushBytes(s, false)
      const events: Array<ThreadEvent> = []
      let skipped = 0
      yield* fs.stream(s.paths.events, { start: entry.start_offset, end: entry.end_offset }).pipe(
        splitLines(entry.start_offset),
        Stream.runForEachArray((lines) =>
          Effect.sync(() => {
            for (const line of lines) {
              // The scan's rules exactly (strict UTF-8, Rust trim), so counts and skips agree.
              const text = scanLineText(lineText(line.bytes))
              if (text === undefined) {
                skipped++
                continue
              }
              if (text.length === 0) continue
              const decoded = decodeLineText(text)
              if (Result.isSuccess(decoded)) events.push(decoded.success.event)
              else skipped++
            }
          })
        )
      )
      return { turn, events, skipped }
    }))
  })

  const visitSnapshot: Stream.Stream<SnapshotLine, StoreIoError> = Stream.unwrap(
    Effect.gen(function*() {
      yield* s.semaphore.take(1)
      yield* Effect.addFinalizer(() => s.semaphore.release(1))
      yield* ensureIndex(fs, s)
      yield* persistMeta(s)
      return fs.stream(s.paths.events, { start: 0, end: s.nextOffset }).pipe(splitLines(0))
    })
  )

  return {
    sessionId: s.sessionId,
    paths: s.paths,
    lockState: lockStateOf(s),
    append,
    appendAll,
    appendUnknown,
    flush,
    complete,
    reconstructTurn,
    visitSnapshot,
    manifest: locked(Effect.sync(() => currentManifest(s))),
    turnIndex: locked(Effect.sync(() => entriesOf(currentEntries(s))))
  }
}

/**
 * Opens (or joins, within this process) the log of one session for the lifetime of the
 * current scope.
 *
 * **Gotchas**: the lock is best effort unless `requireExclusive` is set; without it a second
 * process can open the same session and both will write (the handle reports `lockState`).
 */
export const open = Effect.fn("EventLog.open")(function*(options: OpenOptions) {
  const registry = yield* SessionRegistry
  const fs = yield* SessionFs
  const paths = sessionPaths(options.sessionsDir, options.sessionId)
  const requireExclusive = options.requireExclusive === true
  const state = yield* registry.acquire({
    paths,
    sessionId: options.sessionId,
    requireExclusive,
    onScanProgress: options.onScanProgress
  })
  if (requireExclusive && state.lock._tag === "HeldElsewhere") {
    return yield* new SessionLocked({ session: options.sessionId, path: paths.lock })
  }
  if (requireExclusive && state.lock._tag === "Unavailable") {
    return yield* new StoreIoError({
      operation: "open",
      path: paths.lock,
      code: "ENOLCK",
      detail: `cannot take the session lock (${state.lock.reason}), which requireExclusive needs`
    })
  }
  const budgets: CapBudgets = {
    maxEvents: options.maxEvents ?? DEFAULT_MAX_EVENTS,
    maxBytes: options.maxBytes ?? DEFAULT_MAX_BYTES,
    lowWater: options.evictionLowWater ?? DEFAULT_EVICTION_LOW_WATER
  }
  const log = makeSessionLog(
    state,
    fs,
    budgets,
    options.summaryHook ?? defaultSummaryHook(paths.derivedDir),
    options.barrierAtTurnBoundary !== false
  )
  // A zero, negative or unreadable interval means "off", like the zero budgets.
  const autoFlush = options.autoFlush === undefined
    ? Option.none<Duration.Duration>()
    : Option.filter(Duration.fromInput(options.autoFlush), Duration.isPositive)
  if (Option.isSome(autoFlush)) {
    const interval = autoFlush.value
    const millis = Duration.toMillis(interval)
    const tick = state.semaphore.withPermit(Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      if (state.bufferedSince !== undefined && now - state.bufferedSince >= millis) {
        yield* persistMeta(state)
      }
    })).pipe(
      Effect.catch((error) => Effect.logWarning(`autoFlush of ${paths.events} failed: ${error.message}`))
    )
    yield* Effect.forkScoped(Effect.repeat(tick, Schedule.spaced(interval)))
  }
  return log
})

/** The error channel of `open`. */
export type OpenError = StoreIoError | CreateDirError | SessionLocked

/** `open` requires the registry, the file system seam and a scope for the handle's lifetime. */
export type OpenRequirements = SessionRegistry | SessionFs | Scope.Scope
