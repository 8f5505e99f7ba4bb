/**
 * The turn-lifecycle state machine (docs/log.md#lifecycle): the single reducer that both the append path
 * and the scan path fold every accepted record through, so appending a sequence and rescanning
 * the file it produced always yield the same counters and turn index.
 *
 * The reducer is O(1) per record: the state holds only the open turn's entry, never the index.
 * A transition that closes a turn hands the closed entry back and the caller pushes it onto
 * its own columns (`TurnColumns`); the persisted index is those closed entries plus the open
 * entry while `inTurn`.
 */
import type { LifecycleKind } from "../contract/LifecycleKind.ts"
import type { Manifest, SessionStatus, TurnEntry } from "./SessionFiles.ts"
import type { TurnTable } from "./TurnTable.ts"
import { entryAt, TurnColumns, withOpenEntry } from "./TurnTable.ts"

/**
 * The lifecycle part of a session's in-memory state. `turnCount` is the ordinal of the last
 * closed turn, `eventCount` counts every accepted record (in or out of turns), and `open` is
 * the entry of the turn in progress — present exactly when `inTurn`.
 */
export interface LogState {
  readonly turnCount: number
  readonly eventCount: number
  readonly status: SessionStatus
  readonly inTurn: boolean
  readonly open: TurnEntry | undefined
}

/** The byte span `[start, end)` of one record's line in `events.jsonl`, newline included. */
export interface Span {
  readonly start: number
  readonly end: number
}

/**
 * The result of one record: the next state, whether the record is a turn boundary (the append
 * path persists metadata then) and the entry of a turn this record closed, if any.
 */
export interface Transition {
  readonly state: LogState
  readonly boundary: boolean
  readonly closed: TurnEntry | undefined
}

/**
 * The state before the first record of a (re)scan: `turnCount = turnBase − 1`, so the next
 * `turn.started` gets number `turnBase`. A base below 1 is treated as 1.
 */
export const initialLogState = (turnBase: number): LogState => ({
  turnCount: Math.max(turnBase, 1) - 1,
  eventCount: 0,
  status: "active",
  inTurn: false,
  open: undefined
})

/**
 * Resumes the lifecycle state from metadata adopted on the open fast path: counters and status
 * from the manifest, and — when the manifest says a turn is open — the index's last entry as
 * the open turn. `closed` is the rest of the index, the columns the caller keeps appending to.
 *
 * **Gotchas**: only call this with an index that `isIndexConsistent` accepted for the manifest;
 * otherwise the open entry may be missing and the caller must rescan instead.
 */
export const resumeLogState = (
  manifest: Manifest,
  entries: TurnTable
): { readonly state: LogState; readonly closed: TurnColumns } => {
  const open = manifest.in_turn === true && entries.length > 0 ? entryAt(entries, entries.length - 1) : undefined
  return {
    state: {
      turnCount: manifest.turn_count,
      eventCount: manifest.event_count,
      status: manifest.status,
      inTurn: open !== undefined,
      open
    },
    closed: TurnColumns.of(entries, 0, open === undefined ? entries.length : entries.length - 1)
  }
}

/**
 * The index to persist for a state: the closed entries followed by the open entry, if any, as a
 * view (no copy).
 *
 * **Gotchas**: the view reads `closed` as it is when read; take it after the last append.
 */
export const indexEntries = (closed: TurnTable, state: LogState): TurnTable => withOpenEntry(closed, state.open)

const extend = (entry: TurnEntry, span: Span): TurnEntry => ({
  turn_number: entry.turn_number,
  start_offset: entry.start_offset,
  end_offset: span.end,
  event_count: entry.event_count + 1,
  ts: entry.ts
})

/**
 * Applies one accepted record (docs/log.md#lifecycle). Every record counts in `eventCount`.
 *
 * - `thread_started`: status `active`. `thread_completed`: status `completed`, a boundary.
 * - `turn_started`: status `active`; opens turn `turnCount + 1` with span and `ts`. If a turn
 *   is already open it is closed first as it stands (its `end_offset` kept, `turnCount` raised to
 *   its number, returned in `closed`) — the reference instead opened a second entry with the
 *   same number (docs/differences.md).
 * - `turn_completed` / `turn_failed`: always a boundary; when a turn is open it is extended by
 *   this record, closed, returned in `closed`, and `turnCount` becomes its number (never lower).
 *   Outside a turn nothing else changes.
 * - `other`: extends the open turn, if any.
 *
 * `ts` is the time recorded for a newly opened entry: the caller passes the record's own
 * timestamp when it has one, else the current time (docs/format.md#turn-index).
 */
export const applyLifecycleEvent = (state: LogState, kind: LifecycleKind, span: Span, ts: string): Transition => {
  const eventCount = state.eventCount + 1
  const open = state.open
  switch (kind) {
    case "thread_started":
      return { state: { ...state, eventCount, status: "active" }, boundary: false, closed: undefined }
    case "thread_completed":
      return { state: { ...state, eventCount, status: "completed" }, boundary: true, closed: undefined }
    case "turn_started": {
      const turnCount = open === undefined ? state.turnCount : Math.max(state.turnCount, open.turn_number)
      const next: TurnEntry = {
        turn_number: turnCount + 1,
        start_offset: span.start,
        end_offset: span.end,
        event_count: 1,
        ts
      }
      return {
        state: { turnCount, eventCount, status: "active", inTurn: true, open: next },
        boundary: false,
        closed: open
      }
    }
    case "turn_completed":
    case "turn_failed": {
      if (open === undefined) {
        return { state: { ...state, eventCount, inTurn: false }, boundary: true, closed: undefined }
      }
      const closed = extend(open, span)
      return {
        state: {
          turnCount: Math.max(state.turnCount, closed.turn_number),
          eventCount,
          status: state.status,
          inTurn: false,
          open: undefined
        },
        boundary: true,
        closed
      }
    }
    case "other":
      return {
        state: {
          turnCount: state.turnCount,
          eventCount,
          status: state.status,
          inTurn: state.inTurn,
          open: open === undefined ? undefined : extend(open, span)
        },
        boundary: false,
        closed: undefined
      }
  }
}
