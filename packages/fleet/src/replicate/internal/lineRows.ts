/**
 * From one raw line of `events.jsonl` to the fleet's `events` row: the digest of the exact bytes,
 * the decoded event when PostgreSQL's `jsonb` can hold it, its type, turn and timestamp. The turn
 * numbering follows domain's lifecycle reducer, carried from line to line (and from batch to batch
 * through the replication cursor) as the small {@link TurnState}.
 */
import type { LifecycleKind, LogState } from "@logbook/domain"
import { applyLifecycleEvent, classifyAndDecodeLine, eventTimestamp, parseRfc3339 } from "@logbook/domain"
import { sha256Hex } from "@logbook/store"
import { Result, UndefinedOr } from "effect"

/** Where the turn numbering stands: the last closed turn's number and the open turn, if any. */
export interface TurnState {
  readonly turnCount: number
  readonly openTurn: number | undefined
}

/** The numbering at the head of an epoch whose first turn is `turnBase`. */
export const initialTurnState = (turnBase: number): TurnState => ({
  turnCount: Math.max(turnBase, 1) - 1,
  openTurn: undefined
})

/** One `events` row, ready to insert (`event` is JSON text bound untyped, so the server parses it as `jsonb`). */
export type EventRow = {
  readonly session_id: string
  readonly epoch: number
  readonly byte_offset: number
  readonly length: number
  readonly sha256: string
  readonly line: Uint8Array
  readonly event: string | null
  readonly event_type: string | null
  readonly turn: number | null
  readonly ts: string | null
}

const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

const jsonbSafeString = (s: string): boolean => !s.includes("\u0000") && !loneSurrogate.test(s)

/** Whether every string and key of a parsed JSON value is one `jsonb` accepts (no NUL, no lone surrogate). */
const jsonbSafe = (value: unknown): boolean => {
  const stack: Array<unknown> = [value]
  while (stack.length > 0) {
    const v = stack.pop()
    if (typeof v === "string") {
      if (!jsonbSafeString(v)) return false
    } else if (Array.isArray(v)) {
      for (const x of v) stack.push(x)
    } else if (typeof v === "object" && v !== null) {
      for (const [k, x] of Object.entries(v)) {
        if (!jsonbSafeString(k)) return false
        stack.push(x)
      }
    }
  }
  return true
}

const utf8 = new TextDecoder("utf-8", { fatal: true })
const strictUtf8 = UndefinedOr.liftThrowable((bytes: Uint8Array): string => utf8.decode(bytes))
const parseJson = UndefinedOr.liftThrowable((text: string): unknown => JSON.parse(text))

/** The line's JSON text when it is strict UTF-8, valid JSON and storable as `jsonb`; else null. */
const jsonbText = (body: Uint8Array): string | null => {
  const text = strictUtf8(body)
  if (text === undefined) return null
  const value = parseJson(text)
  return value !== undefined && jsonbSafe(value) ? text : null
}

/** An RFC 3339 timestamp PostgreSQL's `timestamptz` reads (years 1–9999), else null. */
const storableTimestamp = (text: string | undefined): string | null => {
  if (text === undefined || parseRfc3339(text) === undefined) return null
  const year = Number(text.slice(0, 4))
  return /^\d{4}-/.test(text) && year >= 1 ? text : null
}

const stepTurn = (
  state: TurnState,
  kind: LifecycleKind
): { readonly state: TurnState; readonly turn: number | null } => {
  const log: LogState = {
    turnCount: state.turnCount,
    eventCount: 0,
    status: "active",
    inTurn: state.openTurn !== undefined,
    open: state.openTurn === undefined
      ? undefined
      : { turn_number: state.openTurn, start_offset: 0, end_offset: 0, event_count: 0, ts: "" }
  }
  const t = applyLifecycleEvent(log, kind, { start: 0, end: 0 }, "")
  const next: TurnState = { turnCount: t.state.turnCount, openTurn: t.state.open?.turn_number }
  switch (kind) {
    case "thread_started":
    case "thread_completed":
      return { state: next, turn: null }
    case "turn_completed":
    case "turn_failed":
      return { state: next, turn: t.closed?.turn_number ?? null }
    default:
      return { state: next, turn: next.openTurn ?? null }
  }
}

/**
 * The row of one complete line (`bytes` includes its `\n`) at `offset`, and the turn numbering
 * after it. A line the scan skips (invalid UTF-8, not an envelope) is stored with its bytes and
 * digest, a null event when it is not JSON `jsonb` accepts, and no turn.
 */
export const lineRow = (
  sessionId: string,
  epoch: number,
  offset: number,
  bytes: Uint8Array,
  turns: TurnState
): { readonly row: EventRow; readonly turns: TurnState } => {
  const body = bytes.subarray(0, bytes.length - 1)
  const { cls, decoded } = classifyAndDecodeLine(body)
  let next = turns
  let turn: number | null = null
  let ts: string | null = null
  let eventType: string | null = null
  if (cls._tag === "Counted") {
    eventType = cls.type
    const stepped = stepTurn(turns, cls.lifecycle)
    next = stepped.state
    turn = stepped.turn
    const envelope = cls.envelope ?? (decoded !== undefined && Result.isSuccess(decoded) ? decoded.success : undefined)
    if (envelope !== undefined) ts = storableTimestamp(eventTimestamp(envelope.event))
  }
  const line = body.slice()
  return {
    row: {
      session_id: sessionId,
      epoch,
      byte_offset: offset,
      length: body.length,
      sha256: sha256Hex(body),
      line,
      event: jsonbText(body),
      event_type: eventType,
      turn,
      ts
    },
    turns: next
  }
}
