/**
 * The one scan of a log, as a reducer: every classified line of `events.jsonl` folded, in file
 * order, into the lifecycle state, the closed turn entries and the few facts a rebuild needs
 * (first recorded timestamp, the run of checkpoint records at the head). The writer's rescan and the read-only
 * inspector both fold through {@link scanLine}, and both build the manifest they publish or
 * report with {@link rebuiltManifest}, so a rescan and an inspection of the same bytes agree.
 */
import type { LineClass } from "../contract/Classify.ts"
import { eventTimestamp } from "../contract/ThreadEvent.ts"
import type { LogState, Span } from "./Lifecycle.ts"
import { applyLifecycleEvent, indexEntries, initialLogState } from "./Lifecycle.ts"
import type { Manifest, PendingCapRewrite, TurnEntry } from "./SessionFiles.ts"
import { SESSION_STORE_SCHEMA_VERSION } from "./SessionFiles.ts"
import { inferTurnBase } from "./TurnIndex.ts"
import type { TurnTable } from "./TurnTable.ts"
import { TurnColumns } from "./TurnTable.ts"

/**
 * What a scan has found so far. `closed` holds the closed turn entries column by column, owned
 * by the fold and appended to in place (copying it per line would make a rescan quadratic, and
 * an object per turn kept a rescan of many small turns above its memory goal);
 * `checkpointRun` is the length of the leading run of checkpoint records (see
 * {@link isCheckpointRecord}), which is what numbers the turns of a log rewritten without its
 * marker, and `inCheckpointRun` whether that run is still going.
 */
export interface LogScan {
  readonly log: LogState
  readonly closed: TurnColumns
  readonly lines: number
  readonly skipped: number
  readonly firstTimestamp: string | undefined
  readonly checkpointRun: number
  readonly inCheckpointRun: boolean
}

/**
 * Whether a line is one of the records a cap rewrite puts in front of the retained suffix: a
 * counted `matrix.updated` (a matrix checkpoint) or a `thread.completed` (the evidence of a
 * completed status whose record was evicted).
 */
export const isCheckpointRecord = (cls: LineClass): boolean =>
  cls._tag === "Counted" && (cls.type === "matrix.updated" || cls.lifecycle === "thread_completed")

/** The scan before its first line; the first `turn.started` gets number `turnBase`. */
export const emptyLogScan = (turnBase: number): LogScan => ({
  log: initialLogState(turnBase),
  closed: new TurnColumns(),
  lines: 0,
  skipped: 0,
  firstTimestamp: undefined,
  checkpointRun: 0,
  inCheckpointRun: true
})

/**
 * Folds one line: a `Skip` only counts as a line; a counted line steps the lifecycle reducer
 * with its span. A `turn.started` opens its entry with the record's own timestamp when it has
 * one, else `now`.
 */
export const scanLine = (scan: LogScan, cls: LineClass, span: Span, now: string): LogScan => {
  if (cls._tag === "Skip") {
    return { ...scan, lines: scan.lines + 1, skipped: scan.skipped + 1, inCheckpointRun: false }
  }
  let ts = now
  let firstTimestamp = scan.firstTimestamp
  const inCheckpointRun = scan.inCheckpointRun && isCheckpointRecord(cls)
  if (cls.lifecycle === "turn_started") {
    // Lifecycle lines were fully decoded by the classifier; reuse that envelope.
    const recorded = cls.envelope === undefined ? undefined : eventTimestamp(cls.envelope.event)
    if (recorded !== undefined) ts = recorded
    if (firstTimestamp === undefined) firstTimestamp = recorded
  }
  const t = applyLifecycleEvent(scan.log, cls.lifecycle, span, ts)
  if (t.closed !== undefined) scan.closed.push(t.closed)
  return {
    log: t.state,
    closed: scan.closed,
    lines: scan.lines + 1,
    skipped: scan.skipped,
    firstTimestamp,
    checkpointRun: inCheckpointRun ? span.end : scan.checkpointRun,
    inCheckpointRun
  }
}

/** The turn index a scan arrives at: the closed entries, then the open one. */
export const scanEntries = (scan: LogScan): TurnTable => indexEntries(scan.closed, scan.log)

/**
 * The same scan numbered from another base: turn numbers only ever count up from the base, so
 * shifting every number by the difference is exactly what scanning from `turnBase` would give.
 */
export const rebaseLogScan = (scan: LogScan, from: number, turnBase: number): LogScan => {
  const shift = Math.max(turnBase, 1) - Math.max(from, 1)
  if (shift === 0) return scan
  const move = (e: TurnEntry): TurnEntry => ({ ...e, turn_number: e.turn_number + shift })
  return {
    ...scan,
    log: {
      ...scan.log,
      turnCount: scan.log.turnCount + shift,
      open: scan.log.open === undefined ? undefined : move(scan.log.open)
    },
    closed: scan.closed.slice(0, 0, shift)
  }
}

/** What a rescan starts from: the stored metadata that parsed, and the log's length after repair. */
export interface RescanInput {
  readonly manifest: Manifest | undefined
  readonly entries: ReadonlyArray<TurnEntry> | undefined
  readonly marker: PendingCapRewrite | undefined
  readonly fileLen: number
}

/**
 * The base to scan from before the log was read: exact unless the log was rewritten without its
 * marker, where {@link rescanTurnBase} corrects it from the scan (see `inferTurnBase`).
 */
export const provisionalTurnBase = (input: RescanInput): number =>
  inferTurnBase(input.manifest, input.entries, input.marker, input.fileLen)

/**
 * The turn base of a rescan of this log, given the scan (numbered from any base): the
 * `inferTurnBase` rules with the scan's leading checkpoint run.
 */
export const rescanTurnBase = (input: RescanInput, scan: LogScan): number =>
  inferTurnBase(input.manifest, input.entries, input.marker, input.fileLen, scan.checkpointRun)

/** Identity and clock facts a rebuilt manifest takes from outside the log. */
export interface RebuildFacts {
  /** The session id to record when no stored manifest parsed. */
  readonly sessionId: string
  /** The log's length after the open's repair. */
  readonly fileLen: number
  readonly turnBase: number
  /** When the rebuild happens (for timestamps no stored manifest or record provides). */
  readonly now: string
}

/**
 * The manifest a rescan publishes: counters, status and `in_turn` from the scan; identity and
 * timestamps kept from a stored manifest that parsed (an empty `created_at` replaced by the
 * first recorded turn timestamp, else `now`); without one, `created_at` is the first recorded
 * turn timestamp (else `now`) and `updated_at` is `now`.
 */
export const rebuiltManifest = (
  stored: Manifest | undefined,
  scan: Pick<LogScan, "log" | "firstTimestamp">,
  facts: RebuildFacts
): Manifest => {
  const createdFromLog = scan.firstTimestamp ?? facts.now
  return {
    session_id: stored?.session_id ?? facts.sessionId,
    schema_version: SESSION_STORE_SCHEMA_VERSION,
    created_at: stored === undefined || stored.created_at === "" ? createdFromLog : stored.created_at,
    updated_at: stored?.updated_at ?? facts.now,
    turn_count: scan.log.turnCount,
    event_count: scan.log.eventCount,
    status: scan.log.status,
    in_turn: scan.log.inTurn,
    persisted_file_len: facts.fileLen,
    retained_turn_base: facts.turnBase
  }
}
