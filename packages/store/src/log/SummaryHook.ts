/**
 * What a host may plug into cap eviction: the summary hook that persists what an eviction is
 * about to remove (before anything changes), the range it is handed, the error that aborts the
 * eviction, and the default hook writing `derived/eviction-summary-<digest>.json`. The eviction
 * itself is the write path's business (`EventLog` runs it after an append crosses a budget).
 */
import type { ThreadEvent } from "@logbook/domain"
import { addToEvictionSummary, emptyEvictionSummary, evictionSummaryFile, formatRfc3339 } from "@logbook/domain"
import { Clock, Effect, Schema, Stream } from "effect"
import * as NodePath from "node:path"
import { SessionFs } from "../fs/SessionFs.ts"
import type { StoreIoError } from "../fs/StoreError.ts"

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

/** File names of summaries start with this; pruning keeps the newest `MAX_EVICTION_SUMMARIES`. */
export const SUMMARY_PREFIX = "eviction-summary-"

/** The summary file for an evicted range: named by its digest so a retry rewrites the same file. */
export const evictionSummaryPath = (derivedDir: string, rangeDigest: string): string =>
  NodePath.join(derivedDir, `${SUMMARY_PREFIX}${rangeDigest.slice(0, 32)}.json`)

/** The default hook: writes `derived/eviction-summary-<digest>.json` with grounded facts. */
export const defaultSummaryHook = (derivedDir: string): SummaryHook => (range) =>
  Effect.gen(function*() {
    const acc = yield* Stream.runFold(range.events, () => emptyEvictionSummary, addToEvictionSummary)
    const createdAt = formatRfc3339(yield* Clock.currentTimeMillis)
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
