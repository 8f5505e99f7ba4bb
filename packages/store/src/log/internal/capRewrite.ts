/**
 * Cap eviction I/O: when a budget is exceeded, atomically replaces `events.jsonl` with a suffix
 * of itself (whole turns only, the open turn never) after the summary hook succeeded,
 * re-inserting the newest evicted matrix checkpoint per matrix id and, when the evicted prefix
 * left the session `completed`, its last `thread.completed` record, so a rescan of the new file
 * derives the status the session had. The file is streamed, never loaded whole; planning is
 * domain's pure planner, and every change to the session state goes through its transitions.
 */
import type { CapBudgets, EvictionPlan, LineClass, LogState, ThreadEvent } from "@logbook/domain"
import {
  applyLifecycleEvent,
  classifyLine,
  decodeLineText,
  encodeLine,
  initialLogState,
  mayHoldMatrixCheckpoint,
  planCapEviction,
  scanLineText
} from "@logbook/domain"
import { Effect, Option, Result, Stream } from "effect"
import { Buffer } from "node:buffer"
import { createHash } from "node:crypto"
import * as NodePath from "node:path"
import type { SessionFsApi } from "../../fs/SessionFs.ts"
import { SessionFs } from "../../fs/SessionFs.ts"
import { StoreIoError } from "../../fs/StoreError.ts"
import { splitLines } from "../LineSplitter.ts"
import type { SummaryHook, SummaryHookFailed } from "../SummaryHook.ts"
import { MAX_EVICTION_SUMMARIES, SUMMARY_PREFIX } from "../SummaryHook.ts"
import { clearMarkerWith, writeMarkerWith } from "./metaFiles.ts"
import { lineText } from "./scan.ts"
import type { SessionState } from "./sessionState.ts"
import {
  currentEntries,
  fileSwapped,
  flushBytes,
  overBudget,
  persistMeta,
  poisoned,
  rewriteApplied
} from "./sessionState.ts"

/** What a `matrix.updated` record is to the checkpoint logic. */
type MatrixLine = { readonly _tag: "Snapshot"; readonly id: string } | { readonly _tag: "Undecodable" }

/** The matrix meaning of a line the classifier already saw; undefined when it is not matrix.updated. */
const matrixLineOf = (bytes: Uint8Array, cls: LineClass): MatrixLine | undefined => {
  if (cls._tag !== "Counted" || cls.type !== "matrix.updated") return undefined
  const text = scanLineText(lineText(bytes))
  const decoded = text === undefined ? undefined : decodeLineText(text)
  return decoded !== undefined && Result.isSuccess(decoded) && decoded.success.event.type === "matrix.updated"
    ? { _tag: "Snapshot", id: decoded.success.event.spec.id }
    : { _tag: "Undecodable" }
}

/** The matrix id of a retained line, if it is a decodable matrix.updated record. */
const retainedMatrixId = (bytes: Uint8Array): string | undefined => {
  if (!mayHoldMatrixCheckpoint(bytes)) return undefined
  const line = matrixLineOf(bytes, classifyLine(lineText(bytes)))
  return line?._tag === "Snapshot" ? line.id : undefined
}

/**
 * Plans and, when a plan exists, executes one cap rewrite.
 *
 * **Gotchas**: order is hook → marker → atomic replace → index → manifest → marker removal;
 * `open` recovers every crash window between those steps. A failure that may
 * have left the new file in place while memory still describes the old one poisons the handle
 * (every later operation fails `EUNAVAILABLE`); reopening recovers through the marker.
 */
export const enforceCap = (
  fs: SessionFsApi,
  s: SessionState,
  budgets: CapBudgets,
  hook: SummaryHook
): Effect.Effect<boolean, StoreIoError | SummaryHookFailed> =>
  Effect.gen(function*() {
    if (!overBudget(s, budgets)) return false
    const plan = planCapEviction({
      entries: currentEntries(s),
      inTurn: s.log.inTurn,
      eventCount: s.log.eventCount,
      fileLen: s.nextOffset,
      turnCount: s.log.turnCount
    }, budgets)
    if (Option.isNone(plan)) return false
    yield* rewrite(fs, s, plan.value, hook)
    return true
  })

/** A line with its newline (a verbatim copy of the last line of a file may lack it). */
const terminated = (bytes: Uint8Array): Uint8Array =>
  bytes[bytes.length - 1] === 10 ? bytes : Buffer.concat([bytes, Buffer.from("\n")])

/** Steps the lifecycle reducer for one prefix line, for its status only (spans do not matter here). */
const statusStep = (state: LogState, cls: LineClass): LogState =>
  cls._tag === "Counted" ? applyLifecycleEvent(state, cls.lifecycle, { start: 0, end: 0 }, "").state : state

const rewrite = (fs: SessionFsApi, s: SessionState, plan: EvictionPlan, hook: SummaryHook) =>
  Effect.gen(function*() {
    const { paths } = s
    yield* flushBytes(s, true)
    const prevLen = s.nextOffset
    const cut = plan.truncateOffset
    if (cut > prevLen) {
      return yield* new StoreIoError({
        operation: "capRewrite",
        path: paths.events,
        code: "EINVAL",
        detail: "cap offset exceeds event log length"
      })
    }
    // Pass 1 over the evicted prefix: countable lines, digest, last matrix snapshot per id,
    // matrix records that do not decode — kept verbatim so replay still fails closed on them —
    // and the status the prefix leaves (the scan reducer's, so it is what a rescan would derive).
    const digest = createHash("sha256")
    let countedLines = 0
    let prefix = initialLogState(1)
    let lastThreadCompleted: Uint8Array | undefined
    const lastEvictedSnapshot = new Map<string, Uint8Array>()
    const undecodableMatrixLines: Array<Uint8Array> = []
    yield* fs.stream(paths.events, { start: 0, end: cut }).pipe(
      Stream.tap((chunk) => Effect.sync(() => digest.update(chunk))),
      splitLines(0),
      Stream.runForEachArray((lines) =>
        Effect.sync(() => {
          for (const line of lines) {
            const cls = classifyLine(lineText(line.bytes))
            if (cls._tag === "Counted") countedLines++
            prefix = statusStep(prefix, cls)
            if (cls._tag === "Counted" && cls.lifecycle === "thread_completed") lastThreadCompleted = line.bytes.slice()
            const matrix = matrixLineOf(line.bytes, cls)
            // Copy: a line is a view into a read chunk of up to 256 KiB, which it would keep alive.
            if (matrix?._tag === "Snapshot") lastEvictedSnapshot.set(matrix.id, line.bytes.slice())
            else if (matrix?._tag === "Undecodable") undecodableMatrixLines.push(line.bytes.slice())
          }
        })
      )
    )
    // Pass 2 over the retained suffix: which matrix ids have a newer snapshot there.
    if (lastEvictedSnapshot.size > 0) {
      yield* fs.stream(paths.events, { start: cut, end: prevLen }).pipe(
        splitLines(cut),
        Stream.runForEachArray((lines) =>
          Effect.sync(() => {
            for (const line of lines) {
              const id = retainedMatrixId(line.bytes)
              if (id !== undefined) lastEvictedSnapshot.delete(id)
            }
          })
        )
      )
    }
    const evicted = Math.min(plan.turns, s.closed.length)
    const firstTurn = evicted > 0 ? s.closed.turnAt(0) : plan.retainedTurnBase
    const lastTurn = evicted > 0 ? s.closed.turnAt(evicted - 1) : plan.retainedTurnBase - 1
    const events: Stream.Stream<ThreadEvent, StoreIoError> = fs.stream(paths.events, { start: 0, end: cut }).pipe(
      splitLines(0),
      Stream.filterMap((line) => {
        // The scan's rules exactly (strict UTF-8, Rust trim), like turn reconstruction.
        const text = scanLineText(lineText(line.bytes))
        const decoded = text === undefined || text.length === 0 ? undefined : decodeLineText(text)
        return decoded !== undefined && Result.isSuccess(decoded)
          ? Result.succeed(decoded.success.event)
          : Result.failVoid
      })
    )
    yield* Effect.provideService(
      hook({
        sessionId: s.sessionId,
        rangeDigest: digest.digest("hex"),
        firstTurn,
        lastTurn,
        bytes: cut,
        countedLines,
        events
      }),
      SessionFs,
      fs
    )

    // Checkpoints: undecodable matrix records first (verbatim, newline-terminated), then the kept
    // snapshots re-serialised with the current schema version, ordered by matrix id, then the
    // evidence of a `completed` status (verbatim). All of them precede the first retained turn,
    // which is what lets a rescan without the marker number the retained turns exactly.
    const parts: Array<Uint8Array> = []
    for (const bytes of undecodableMatrixLines) parts.push(terminated(bytes))
    let checkpointCount = undecodableMatrixLines.length
    for (const id of [...lastEvictedSnapshot.keys()].sort()) {
      const bytes = lastEvictedSnapshot.get(id)
      if (bytes === undefined) continue
      const text = scanLineText(lineText(bytes))
      const decoded = text === undefined ? undefined : decodeLineText(text)
      if (decoded === undefined || Result.isFailure(decoded)) continue
      // A checkpoint the encoder cannot write exactly (a counter beyond 2^53) is kept verbatim.
      const encoded = Result.try(() => encodeLine(decoded.success.event) + "\n")
      parts.push(Result.isSuccess(encoded) ? Buffer.from(encoded.success, "utf8") : terminated(bytes))
      checkpointCount++
    }
    if (prefix.status === "completed" && lastThreadCompleted !== undefined) {
      parts.push(terminated(lastThreadCompleted))
      checkpointCount++
    }
    const checkpoints = Buffer.concat(parts)
    const newLen = checkpoints.length + (prevLen - cut)
    yield* writeMarkerWith(fs, paths.marker, {
      previous_file_len: prevLen,
      new_file_len: newLen,
      retained_turn_base: plan.retainedTurnBase,
      checkpoint_bytes: checkpoints.length
    })

    // Replace the file: close the append handle, atomic write of checkpoints + suffix, reopen.
    const oldFile = s.file
    fileSwapped(s, undefined)
    if (oldFile !== undefined) yield* oldFile.close
    const replaced = yield* Effect.result(fs.writeAtomicStream(
      paths.events,
      Stream.concat(
        Stream.make(new Uint8Array(checkpoints)),
        fs.stream(paths.events, { start: cut, end: prevLen })
      )
    ))
    const reopened = yield* Effect.result(fs.openAppend(paths.events))
    if (reopened._tag === "Failure") {
      poisoned(s, `event log file is unavailable after a cap rewrite: ${reopened.failure.detail}`)
      return yield* reopened.failure
    }
    fileSwapped(s, reopened.success)
    if (replaced._tag === "Failure") {
      // The atomic write can fail after its rename (the directory fsync): the new contents are
      // then in place while memory still describes the old file, so every offset would be wrong.
      // Only a file still at the old length (and distinguishable from the new one) is known to
      // be the old file; otherwise the handle is unusable and `open` recovers from the marker.
      const size = yield* Effect.result(reopened.success.size)
      if (Result.isFailure(size) || size.success !== prevLen || newLen === prevLen) {
        poisoned(
          s,
          `a cap rewrite failed after it may have replaced the event log ` +
            `(${replaced.failure.detail}); reopen the session`
        )
      }
      return yield* replaced.failure
    }

    // In memory: drop evicted turns, shift retained offsets exactly.
    rewriteApplied(s, {
      turns: plan.turns,
      shift: checkpoints.length - cut,
      evictedLines: countedLines,
      insertedLines: checkpointCount,
      retainedTurnBase: plan.retainedTurnBase,
      newLen
    })
    yield* persistMeta(s)
    yield* clearMarkerWith(fs, paths.marker)
    yield* pruneSummaries(fs, paths.derivedDir)
  })

/** Removes the oldest summaries beyond `MAX_EVICTION_SUMMARIES` (by mtime, then name). */
const pruneSummaries = (fs: SessionFsApi, derivedDir: string) =>
  Effect.gen(function*() {
    const names = (yield* fs.listDir(derivedDir)).filter((n) => n.startsWith(SUMMARY_PREFIX) && n.endsWith(".json"))
    if (names.length <= MAX_EVICTION_SUMMARIES) return
    const stamped: Array<{ name: string; mtime: number }> = []
    for (const name of names) {
      const info = yield* fs.lstat(NodePath.join(derivedDir, name))
      if (Option.isSome(info) && info.value.type === "File") stamped.push({ name, mtime: info.value.mtimeMs })
    }
    stamped.sort((a, b) => a.mtime - b.mtime || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    for (const { name } of stamped.slice(0, Math.max(0, stamped.length - MAX_EVICTION_SUMMARIES))) {
      yield* fs.removeFile(NodePath.join(derivedDir, name))
    }
  })
