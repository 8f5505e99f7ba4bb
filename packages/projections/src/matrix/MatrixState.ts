/**
 * Matrix replay as a projection (docs/matrix.md#replay, docs/matrix.md#durability): a Stream over the retained log folded
 * with `Matrix.replayStep`, giving the latest checkpoint per matrix id. It fails closed: any
 * checkpoint that cannot be read or that breaks the replay rules fails the whole projection,
 * and the host must then keep admission closed rather than guess.
 */
import type { MatrixSnapshot, MatrixUpdatedEvent } from "@logbook/domain"
import { classifyLine, decodeLineText, Matrix, MatrixError, mayHoldMatrixCheckpoint } from "@logbook/domain"
import type { SessionLog, SnapshotLine, StoreIoError } from "@logbook/store"
import { SessionFs } from "@logbook/store"
import { Effect, Result, Stream } from "effect"
import type { LogRecord } from "../session/EventStream.ts"
import { readEventRecords } from "../session/EventStream.ts"

// Matching on raw bytes skips decoding the ordinary lines altogether.
const mayHoldCheckpoint = (line: SnapshotLine): boolean => mayHoldMatrixCheckpoint(line.bytes)

const utf8 = new TextDecoder("utf-8")

const snapshotOf = (event: MatrixUpdatedEvent): MatrixSnapshot => ({
  spec: event.spec,
  lifecycle: event.lifecycle,
  tasks: event.tasks,
  generation: event.generation,
  revision: event.revision
})

const checkpointError = (offset: number, error: MatrixError): MatrixError =>
  new MatrixError({ message: `matrix checkpoint at byte ${offset}: ${error.message}` })

/** Folds one decoded checkpoint found at byte `offset`. */
const stepSnapshot = (
  state: Matrix.ReplayState,
  offset: number,
  event: MatrixUpdatedEvent
): Result.Result<Matrix.ReplayState, MatrixError> =>
  Result.mapError(Matrix.replayStep(state, snapshotOf(event)), (error) => checkpointError(offset, error))

/**
 * One candidate line: lines the scan would not count (torn, blank, not an envelope) and
 * other event types leave the replay as it is; a counted `matrix.updated` line must decode
 * and pass `Matrix.replayStep`.
 */
const step = (state: Matrix.ReplayState, line: SnapshotLine): Result.Result<Matrix.ReplayState, MatrixError> => {
  const cls = classifyLine(line.bytes)
  if (cls._tag !== "Counted" || cls.type !== "matrix.updated") return Result.succeed(state)
  const decoded = decodeLineText(utf8.decode(line.bytes))
  if (Result.isFailure(decoded)) {
    return Result.fail(
      new MatrixError({
        message: `matrix checkpoint at byte ${line.offset} does not decode: ${decoded.failure.message}`
      })
    )
  }
  const event = decoded.success.event
  return event.type === "matrix.updated" ? stepSnapshot(state, line.offset, event) : Result.succeed(state)
}

/**
 * Replays the `matrix.updated` checkpoints among `lines` (raw log lines in file order, as
 * `SessionLog.visitSnapshot` streams them) into the latest snapshot per matrix id, ordered
 * by id. Only lines that can hold a checkpoint are classified, and only counted
 * `matrix.updated` envelopes are decoded. A checkpoint that is a well-formed envelope but
 * does not decode, a spec change, a revision that does not advance or a snapshot that breaks
 * an invariant fails with a `MatrixError` naming the line's byte offset.
 *
 * **Gotchas**: lines the scan ignores (a torn tail, garbage) are ignored here too: they were
 * never acknowledged by a barrier, so no effect can depend on them.
 */
export const matrixStateOfLines = <E, R>(
  lines: Stream.Stream<SnapshotLine, E, R>
): Effect.Effect<ReadonlyMap<string, MatrixSnapshot>, MatrixError | E, R> =>
  lines.pipe(
    Stream.filter(mayHoldCheckpoint),
    Stream.runFoldEffect(() => Matrix.emptyReplay, (state, line) => Effect.fromResult(step(state, line))),
    Effect.map(Matrix.replayResult)
  )

/**
 * The replayed matrix map of a session: runs the log's durability barrier, then streams
 * every retained line (docs/log.md#reconstruct) through {@link matrixStateOfLines}. After any number of
 * cap rewrites this is still the latest checkpoint per matrix, because a rewrite re-inserts
 * the newest evicted checkpoint of every matrix without a newer retained one (docs/log.md#cap-eviction).
 *
 * **Gotchas**: appends on the session wait while the log streams; fail closed on error.
 */
export const matrixState = Effect.fn("MatrixState.matrixState")(function*(
  log: SessionLog
): Effect.fn.Return<ReadonlyMap<string, MatrixSnapshot>, MatrixError | StoreIoError> {
  return yield* matrixStateOfLines(log.visitSnapshot)
})

const mayBeCheckpoint = (record: LogRecord): boolean =>
  record._tag === "Event" ? record.event.type === "matrix.updated" : record._tag === "Skipped" &&
    record.kind === "undecodable"

/**
 * The replayed matrix map of the `events.jsonl` at `eventsPath`, read-only: the session is not
 * opened (no lock, no repair, no metadata written), so it is safe beside a live writer and for
 * inspection tools. Lines are judged as the scan judges them; a counted line that does not
 * decode is re-read and, when it is a `matrix.updated` envelope, fails the replay as in
 * {@link matrixStateOfLines}. A missing file is an empty log.
 *
 * **Gotchas**: only flushed bytes are visible; a live writer's buffered checkpoints are not, and
 * its unterminated last line is ignored.
 */
export const matrixStateOfEventsFile = Effect.fn("MatrixState.matrixStateOfEventsFile")(function*(
  eventsPath: string
): Effect.fn.Return<ReadonlyMap<string, MatrixSnapshot>, MatrixError | StoreIoError, SessionFs> {
  const fs = yield* SessionFs
  const state = yield* readEventRecords(eventsPath).pipe(
    Stream.filter(mayBeCheckpoint),
    Stream.runFoldEffect(() => Matrix.emptyReplay, (state, record) => {
      if (record._tag === "Event") {
        return record.event.type === "matrix.updated"
          ? Effect.fromResult(stepSnapshot(state, record.offset, record.event))
          : Effect.succeed(state)
      }
      if (record._tag !== "Skipped") return Effect.succeed(state)
      // Rare: re-read the raw line to learn whether the undecodable record is a checkpoint.
      return Effect.flatMap(
        fs.readRange(eventsPath, record.offset, record.offset + record.length),
        (bytes) => Effect.fromResult(step(state, { offset: record.offset, bytes }))
      )
    })
  )
  return Matrix.replayResult(state)
})
