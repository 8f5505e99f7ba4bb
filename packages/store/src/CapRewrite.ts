/**
 * Cap eviction I/O (docs/log.md#cap-eviction, docs/log.md#summary-hook, docs/differences.md): when a budget is exceeded,
 * atomically replaces `events.jsonl` with a suffix of itself (whole turns only, the open turn
 * never) after a summary hook succeeded, re-inserting the newest evicted matrix checkpoint
 * per matrix id. The file is streamed, never loaded whole; planning is domain's pure planner.
 */
import type { CapBudgets, EvictionPlan, LineClass, ThreadEvent } from "@logbook/domain"
import {
  addToEvictionSummary,
  classifyLine,
  decodeLineText,
  emptyEvictionSummary,
  encodeLine,
  evictionSummaryFile,
  planCapEviction,
  scanLineText
} from "@logbook/domain"
import { Clock, Effect, Option, Result, Schema, Stream } from "effect"
import { Buffer } from "node:buffer"
import { createHash } from "node:crypto"
import * as NodePath from "node:path"
import { lineText } from "./internal/scan.ts"
import type { SessionState } from "./internal/sessionState.ts"
import { currentEntries, flushBytes, persistMeta } from "./internal/sessionState.ts"
import { isoFromMillis } from "./internal/time.ts"
import { splitLines } from "./LineSplitter.ts"
import { clearMarker, writeMarker } from "./MetaStore.ts"
import { SessionFs } from "./SessionFs.ts"
import { StoreIoError } from "./StoreError.ts"

/** A summary hook refused the eviction; nothing on disk or in memory changed. */
export class SummaryHookFailed extends Schema.TaggedError<SummaryHookFailed>()("SummaryHookFailed", {
  session: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `eviction summary for session ${this.session} failed, the log was left intact: ${this.detail}`
  }
}

/** What a cap rewrite is about to remove, handed to the summary hook before anything changes. */
export interface EvictedRange {
  readonly sessionId: string
  /** Lowercase hex SHA-256 of the evicted bytes: identical for a retry of the same eviction. */
  readonly rangeDigest: string
  readonly firstTurn: number
  readonly lastTurn: number
  readonly bytes: number
  /** Lines a scan would count (out-of-turn records included) — what leaves `event_count`. */
  readonly countedLines: number
  /** The evicted events that fully decode, in file order, streamed from disk. */
  readonly events: Stream.Stream<ThreadEvent, StoreIoError>
}

/**
 * Persists a summary of an eviction before it happens.
 *
 * **Gotchas**: it must be durable when it returns success; a failure aborts the eviction.
 */
export type SummaryHook = (range: EvictedRange) => Effect.Effect<void, StoreIoError | SummaryHookFailed, SessionFs>

/** Keep at most this many summary files per session (oldest removed after a successful rewrite). */
export const MAX_EVICTION_SUMMARIES = 100

const SUMMARY_PREFIX = "eviction-summary-"

/** The summary file for an evicted range: named by its digest so a retry rewrites the same file. */
export const evictionSummaryPath = (derivedDir: string, rangeDigest: string): string =>
  NodePath.join(derivedDir, `${SUMMARY_PREFIX}${rangeDigest.slice(0, 32)}.json`)

/** The default hook: writes `derived/eviction-summary-<digest>.json` with grounded facts. */
export const defaultSummaryHook = (derivedDir: string): SummaryHook => (range) =>
  Effect.gen(function*() {
    const acc = yield* Stream.runFold(range.events, () => emptyEvictionSummary, addToEvictionSummary)
    const createdAt = isoFromMillis(yield* Clock.currentTimeMillis)
    const file = evictionSummaryFile(acc, {
      sessionId: range.sessionId,
      createdAt,
      countedLines: range.countedLines,
      firstTurn: range.firstTurn,
      lastTurn: range.lastTurn
    })
    const fs = yield* SessionFs
    yield* fs.writeAtomic(evictionSummaryPath(derivedDir, range.rangeDigest), JSON.stringify(file))
  })

/**
 * Cheap pre-filter for the retained part: an unescaped `"matrix.updated"` can only be a whole
 * JSON string; a line spelling the type with `\u` escapes is classified too.
 */
const MATRIX_NEEDLE = Buffer.from("\"matrix.updated\"")
const ESCAPE_NEEDLE = Buffer.from("\\u")

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
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  if (view.indexOf(MATRIX_NEEDLE) === -1 && view.indexOf(ESCAPE_NEEDLE) === -1) return undefined
  const line = matrixLineOf(bytes, classifyLine(lineText(bytes)))
  return line?._tag === "Snapshot" ? line.id : undefined
}

/** True when some budget is exceeded; O(1), so it can run after every append. */
export const overBudget = (s: SessionState, budgets: CapBudgets): boolean =>
  (budgets.maxEvents > 0 && s.log.eventCount > budgets.maxEvents) ||
  (budgets.maxBytes > 0 && s.nextOffset > budgets.maxBytes)

/**
 * Plans and, when a plan exists, executes one cap rewrite.
 *
 * **Gotchas**: order is hook → marker → atomic replace → index → manifest → marker removal;
 * `open` recovers every crash window between those steps (docs/log.md#cap-eviction). A failure that may
 * have left the new file in place while memory still describes the old one poisons the handle
 * (every later operation fails `EUNAVAILABLE`); reopening recovers through the marker.
 */
export const enforceCap = (
  s: SessionState,
  budgets: CapBudgets,
  hook: SummaryHook
): Effect.Effect<boolean, StoreIoError | SummaryHookFailed, SessionFs> =>
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
    yield* rewrite(s, plan.value, hook)
    return true
  })

const rewrite = (s: SessionState, plan: EvictionPlan, hook: SummaryHook) =>
  Effect.gen(function*() {
    const fs = yield* SessionFs
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
    // Pass 1 over the evicted prefix: countable lines, digest, last matrix snapshot per id, and
    // matrix records that do not decode — kept verbatim so replay still fails closed on them.
    const digest = createHash("sha256")
    let countedLines = 0
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
    const evictedEntries = s.closed.slice(0, plan.turns)
    const firstTurn = evictedEntries[0]?.turn_number ?? plan.retainedTurnBase
    const lastTurn = evictedEntries[evictedEntries.length - 1]?.turn_number ?? plan.retainedTurnBase - 1
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
    yield* hook({
      sessionId: s.sessionId,
      rangeDigest: digest.digest("hex"),
      firstTurn,
      lastTurn,
      bytes: cut,
      countedLines,
      events
    })

    // Checkpoints: undecodable matrix records first (verbatim, newline-terminated), then the kept
    // snapshots re-serialised with the current schema version, ordered by matrix id.
    const parts: Array<Uint8Array> = []
    for (const bytes of undecodableMatrixLines) {
      parts.push(bytes[bytes.length - 1] === 10 ? bytes : Buffer.concat([bytes, Buffer.from("\n")]))
    }
    let checkpointCount = undecodableMatrixLines.length
    for (const id of [...lastEvictedSnapshot.keys()].sort()) {
      const bytes = lastEvictedSnapshot.get(id)
      const text = bytes === undefined ? undefined : scanLineText(lineText(bytes))
      const decoded = text === undefined ? undefined : decodeLineText(text)
      if (decoded === undefined || Result.isFailure(decoded)) continue
      parts.push(Buffer.from(encodeLine(decoded.success.event) + "\n", "utf8"))
      checkpointCount++
    }
    const checkpoints = Buffer.concat(parts)
    const newLen = checkpoints.length + (prevLen - cut)
    yield* writeMarker(paths.marker, {
      previous_file_len: prevLen,
      new_file_len: newLen,
      retained_turn_base: plan.retainedTurnBase,
      checkpoint_bytes: checkpoints.length
    })

    // Replace the file: close the append handle, atomic write of checkpoints + suffix, reopen.
    const oldFile = s.file
    s.file = undefined
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
      s.broken = `event log file is unavailable after a cap rewrite: ${reopened.failure.detail}`
      return yield* reopened.failure
    }
    s.file = reopened.success
    if (replaced._tag === "Failure") {
      // The atomic write can fail after its rename (the directory fsync): the new contents are
      // then in place while memory still describes the old file, so every offset would be wrong.
      // Only a file still at the old length (and distinguishable from the new one) is known to
      // be the old file; otherwise the handle is unusable and `open` recovers from the marker.
      const size = yield* Effect.result(reopened.success.size)
      if (Result.isFailure(size) || size.success !== prevLen || newLen === prevLen) {
        s.broken = `a cap rewrite failed after it may have replaced the event log ` +
          `(${replaced.failure.detail}); reopen the session`
      }
      return yield* replaced.failure
    }

    // In memory: drop evicted turns, shift retained offsets exactly.
    const shift = checkpoints.length - cut
    s.closed = s.closed.slice(plan.turns).map((e) => ({
      ...e,
      start_offset: e.start_offset + shift,
      end_offset: e.end_offset + shift
    }))
    const open = s.log.open
    s.log = {
      ...s.log,
      eventCount: s.log.eventCount - countedLines + checkpointCount,
      open: open === undefined
        ? undefined
        : { ...open, start_offset: open.start_offset + shift, end_offset: open.end_offset + shift }
    }
    s.retainedTurnBase = plan.retainedTurnBase
    s.nextOffset = newLen
    s.metaDirty = true
    yield* persistMeta(s)
    yield* clearMarker(paths.marker)
    yield* pruneSummaries(paths.derivedDir)
  })

/** Removes the oldest summaries beyond `MAX_EVICTION_SUMMARIES` (by mtime, then name). */
const pruneSummaries = (derivedDir: string) =>
  Effect.gen(function*() {
    const fs = yield* SessionFs
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
