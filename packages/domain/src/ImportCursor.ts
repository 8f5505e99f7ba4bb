/**
 * What every importer of a foreign session format shares (docs/import.md): the identity of the
 * session a source becomes, the cursor that numbers turns and items while a source is mapped,
 * and the pure helpers that turn "a prompt arrived", "an item happened", "the turn ended" into
 * ThreadEvents. The cursor is plain JSON so an import can stop at any record and resume later
 * from the persisted cursor with exactly the events a single pass would have written.
 *
 * **Gotchas**: a source may still be written (a live rollout), so the last turn of a source is
 * never closed at its end of file: it is closed when the source shows the end (a next prompt, an
 * explicit end record). Closing it early would make "import half, then the rest" differ from
 * "import all at once".
 */
import { Result, Schema } from "effect"
import type { ThreadEvent, Usage } from "./ThreadEvent.ts"
import type { ItemContext, ThreadItem } from "./ThreadItem.ts"

/** The foreign formats Logbook imports. */
export const ImportFormat = Schema.Literals(["codex", "claude", "exec", "gemini"])

/** The foreign formats Logbook imports. */
export type ImportFormat = typeof ImportFormat.Type

/** Which session a source becomes: its id (`codex-<thread id>`, …) and the parent session it names, if any. */
export const ImportIdentity = Schema.Struct({
  sessionId: Schema.String,
  threadId: Schema.String,
  parentSessionId: Schema.optionalKey(Schema.String)
})

/** Which session a source becomes. */
export type ImportIdentity = typeof ImportIdentity.Type

const Count = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

/** Token counters while a turn is open (the four counters of `Usage`). */
export const UsageTotals = Schema.Struct({
  input_tokens: Count,
  cached_input_tokens: Count,
  cache_creation_tokens: Count,
  output_tokens: Count
})

/** Token counters while a turn is open. */
export type UsageTotals = typeof UsageTotals.Type

/** No tokens. */
export const zeroUsage: UsageTotals = {
  input_tokens: 0,
  cached_input_tokens: 0,
  cache_creation_tokens: 0,
  output_tokens: 0
}

/** Counter-wise sum of two usages. */
export const addUsage = (a: UsageTotals, b: UsageTotals): UsageTotals => ({
  input_tokens: a.input_tokens + b.input_tokens,
  cached_input_tokens: a.cached_input_tokens + b.cached_input_tokens,
  cache_creation_tokens: a.cache_creation_tokens + b.cache_creation_tokens,
  output_tokens: a.output_tokens + b.output_tokens
})

/**
 * Where a mapping stands: whether `thread.started` was written, the open turn (if any), how many
 * turns and items were numbered, the usage of the open turn and the last source timestamp seen.
 */
export const ImportCursor = Schema.Struct({
  identity: ImportIdentity,
  started: Schema.Boolean,
  open: Schema.Boolean,
  turnSeq: Count,
  turnId: Schema.String,
  itemSeq: Count,
  usage: UsageTotals,
  lastTs: Schema.String
})

/** Where a mapping stands. */
export type ImportCursor = typeof ImportCursor.Type

/** A fresh cursor for a source that becomes `identity`. */
export const initialCursor = (identity: ImportIdentity): ImportCursor => ({
  identity,
  started: false,
  open: false,
  turnSeq: 0,
  turnId: "",
  itemSeq: 0,
  usage: zeroUsage,
  lastTs: ""
})

/** The result of mapping one source record: the new state, the events to append, and why it was skipped (if it was). */
export interface MapStep<S> {
  readonly state: S
  readonly events: ReadonlyArray<ThreadEvent>
  /** Set when the record produced nothing: a short reason, counted in the import report. */
  readonly skipped?: string
}

/** A mapper of one foreign format: a pure reducer over parsed records. */
export interface ImportMapper<S> {
  readonly format: ImportFormat
  /** The persisted form of the state (validated when an import resumes). */
  readonly state: Schema.Codec<S, unknown>
  /** The identity a record gives, when it names the session (the first one that does wins). */
  readonly identify: (record: unknown) => ImportIdentity | undefined
  readonly initial: (identity: ImportIdentity) => S
  readonly step: (state: S, record: unknown) => MapStep<S>
  /** The usage counted so far for a turn that is still open (reported, never invented into the log). */
  readonly openUsage: (state: S) => UsageTotals
}

/** A JSON object (not an array, not null). */
export type JsonRecord = { readonly [key: string]: unknown }

/** Whether a parsed JSON value is an object. */
export const isRecord = (value: unknown): value is JsonRecord =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** `value[key]` of an object, else undefined. */
export const field = (value: unknown, key: string): unknown => isRecord(value) ? value[key] : undefined

/** Parses JSON text; undefined when it is not JSON (foreign arguments often are not). */
export const parseJsonValue = (text: string): Schema.Json | undefined => {
  const parsed = Result.try((): Schema.Json => JSON.parse(text))
  return Result.isSuccess(parsed) ? parsed.success : undefined
}

/** `value[key]` when it is a string. */
export const str = (value: unknown, key: string): string | undefined => {
  if (!isRecord(value)) return undefined
  const v = value[key]
  return typeof v === "string" ? v : undefined
}

/** `value[key]` when it is a finite number. */
export const num = (value: unknown, key: string): number | undefined => {
  if (!isRecord(value)) return undefined
  const v = value[key]
  return typeof v === "number" && Number.isFinite(v) ? v : undefined
}

/** `value[key]` when it is an object. */
export const obj = (value: unknown, key: string): JsonRecord | undefined => {
  if (!isRecord(value)) return undefined
  const v = value[key]
  return isRecord(v) ? v : undefined
}

/** `value[key]` when it is an array. */
export const arr = (value: unknown, key: string): ReadonlyArray<unknown> | undefined => {
  if (!isRecord(value)) return undefined
  const v = value[key]
  return Array.isArray(v) ? v : undefined
}

/** A non-negative integer counter read from a foreign usage object (anything else counts 0). */
export const counter = (value: unknown, key: string): number => {
  const n = num(value, key)
  return n === undefined || n < 0 ? 0 : Math.floor(n)
}

/** An exit code that fits the contract's `i32`, or undefined. */
export const exitCodeOf = (value: unknown): number | undefined =>
  typeof value === "number" && Number.isInteger(value) && value >= -2147483648 && value <= 2147483647
    ? value
    : undefined

/** The cursor after recording `ts` as the last source timestamp (empty strings keep the old one). */
export const seen = (c: ImportCursor, ts: string | undefined): ImportCursor =>
  ts === undefined || ts.length === 0 ? c : { ...c, lastTs: ts }

/** `thread.started` once, before anything else of the session. */
export const startThread = (c: ImportCursor): { cursor: ImportCursor; events: Array<ThreadEvent> } =>
  c.started
    ? { cursor: c, events: [] }
    : { cursor: { ...c, started: true }, events: [{ type: "thread.started", thread_id: c.identity.threadId }] }

const toUsage = (u: UsageTotals): Usage => ({
  input_tokens: u.input_tokens,
  cached_input_tokens: u.cached_input_tokens,
  cache_creation_tokens: u.cache_creation_tokens,
  output_tokens: u.output_tokens
})

/** Closes the open turn (if any) with `turn.completed` carrying its usage; a no-op without an open turn. */
export const closeTurn = (c: ImportCursor): { cursor: ImportCursor; events: Array<ThreadEvent> } => {
  if (!c.open) return { cursor: c, events: [] }
  const event: ThreadEvent = {
    type: "turn.completed",
    ...(c.lastTs.length > 0 ? { completed_at: c.lastTs } : {}),
    usage: toUsage(c.usage)
  }
  return { cursor: { ...c, open: false, usage: zeroUsage }, events: [event] }
}

/** Ends the open turn with `turn.failed` (an aborted or interrupted turn); a no-op without an open turn. */
export const failTurn = (c: ImportCursor, message: string): { cursor: ImportCursor; events: Array<ThreadEvent> } => {
  if (!c.open) return { cursor: c, events: [] }
  const event: ThreadEvent = {
    type: "turn.failed",
    ...(c.lastTs.length > 0 ? { completed_at: c.lastTs } : {}),
    message,
    usage: toUsage(c.usage)
  }
  return { cursor: { ...c, open: false, usage: zeroUsage }, events: [event] }
}

/**
 * Opens a turn for a user prompt: closes the previous one, then `turn.started` with the prompt (when
 * the source has its text) in `context.goal`, origin `user`, the source timestamp, and the source's turn id when it has one.
 */
export const openTurn = (
  c: ImportCursor,
  prompt: string | undefined,
  ts: string,
  sourceTurnId?: string
): { cursor: ImportCursor; events: Array<ThreadEvent> } => {
  const started = startThread(c)
  const closed = closeTurn(started.cursor)
  const turnSeq = closed.cursor.turnSeq + 1
  const turnId = sourceTurnId !== undefined && sourceTurnId.length > 0 ? sourceTurnId : `turn-${turnSeq}`
  const cursor: ImportCursor = { ...closed.cursor, open: true, turnSeq, turnId, lastTs: ts.length > 0 ? ts : c.lastTs }
  const parent = c.identity.parentSessionId
  const event: ThreadEvent = {
    type: "turn.started",
    context: {
      task_id: c.identity.sessionId,
      turn_id: turnId,
      actor_id: c.identity.sessionId,
      ...(parent === undefined ? {} : { parent_actor_id: parent }),
      origin: "user",
      timestamp: cursor.lastTs,
      ...(prompt === undefined ? {} : { goal: prompt })
    }
  }
  return { cursor, events: [...started.events, ...closed.events, event] }
}

/** An item body without identity: everything but `id` and `context`. */
export type ItemBody = ThreadItem extends infer T ? T extends ThreadItem ? Omit<T, "id" | "context"> : never : never

/** The context stamped on every imported item. */
export const itemContext = (c: ImportCursor, ts: string): ItemContext => {
  const parent = c.identity.parentSessionId
  return {
    task_id: c.identity.sessionId,
    turn_id: c.turnId.length > 0 ? c.turnId : "turn-0",
    actor_id: c.identity.sessionId,
    ...(parent === undefined ? {} : { parent_actor_id: parent }),
    timestamp: ts.length > 0 ? ts : c.lastTs
  }
}

/** The next item id (`item-<n>`, unique within the session) and the cursor that numbered it. */
export const nextItemId = (c: ImportCursor): { cursor: ImportCursor; id: string } => {
  const itemSeq = c.itemSeq + 1
  return { cursor: { ...c, itemSeq }, id: `item-${itemSeq}` }
}

/** Builds an `item.<phase>` event for `body` with the given id and the cursor's context. */
export const itemEvent = (
  phase: "item.started" | "item.updated" | "item.completed",
  c: ImportCursor,
  id: string,
  ts: string,
  body: ItemBody
): ThreadEvent => ({ type: phase, item: { context: itemContext(c, ts), id, ...body } })
