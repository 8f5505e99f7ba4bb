/**
 * The pure helpers the import mappers share to turn "a prompt arrived", "an item happened", "the
 * turn ended" into ThreadEvents while numbering turns and items on an `ImportCursor`.
 */
import { Schema } from "effect"
import type { ThreadEvent, Usage } from "../../contract/ThreadEvent.ts"
import type { ItemContext, ThreadItem } from "../../contract/ThreadItem.ts"
import type { UsageTotals } from "../../contract/Usage.ts"
import { addUsage, zeroUsage } from "../../contract/Usage.ts"
import type { ImportCursor } from "../ImportCursor.ts"
import { labelVerification } from "./toolEvidence.ts"

/**
 * The cursor after recording `ts` as the last source timestamp (empty strings keep the old one);
 * the first one seen is kept as `firstTs`.
 */
export const seen = (c: ImportCursor, ts: string | undefined): ImportCursor =>
  ts === undefined || ts.length === 0
    ? c
    : c.firstTs === undefined || c.firstTs.length === 0
    ? { ...c, lastTs: ts, firstTs: ts }
    : { ...c, lastTs: ts }

/**
 * `thread.started` once, before anything else of the session — and again when a finished source
 * grew (the session reopens after its `thread.completed`).
 */
export const startThread = (c: ImportCursor): { cursor: ImportCursor; events: Array<ThreadEvent> } =>
  c.started && c.finished !== true
    ? { cursor: c, events: [] }
    : {
      cursor: { ...c, started: true, finished: false },
      events: [{ type: "thread.started", thread_id: c.identity.threadId }]
    }

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
  return {
    cursor: { ...c, open: false, usage: zeroUsage, spent: addUsage(c.spent ?? zeroUsage, c.usage) },
    events: [event]
  }
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
  return {
    cursor: { ...c, open: false, usage: zeroUsage, spent: addUsage(c.spent ?? zeroUsage, c.usage) },
    events: [event]
  }
}

/**
 * The source is finished: the open turn (if any) closed with its usage, then `thread.completed`
 * (subtype `success`, outcome `imported`, the session's summed usage and turn count, the last
 * source time). Nothing when the session never started or is already finished. Usage counted
 * after the last turn closed (a trailing token count) is carried by `thread.completed` only.
 */
export const finishThread = (c: ImportCursor): { cursor: ImportCursor; events: Array<ThreadEvent> } => {
  if (!c.started || c.finished === true) return { cursor: c, events: [] }
  const closed = closeTurn(c)
  const total = addUsage(closed.cursor.spent ?? zeroUsage, closed.cursor.usage)
  const event: ThreadEvent = {
    type: "thread.completed",
    ...(c.lastTs.length > 0 ? { completed_at: c.lastTs } : {}),
    thread_id: c.identity.threadId,
    session_id: c.identity.sessionId,
    subtype: "success",
    outcome_code: "imported",
    usage: toUsage(total),
    num_turns: closed.cursor.turnSeq
  }
  return { cursor: { ...closed.cursor, finished: true }, events: [...closed.events, event] }
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

const isJsonValue = Schema.is(Schema.Json)

/**
 * A finished tool call of a tool the contract has no item for: its `tool_invocation` (arguments
 * kept when they are JSON) and its `tool_output`, linked by the source's call id when it has one
 * ({@link completedItems} links the output to the invocation's item id).
 */
export const toolCallItems = (
  name: string,
  args: unknown,
  callId: string | undefined,
  output: string,
  failed: boolean
): Array<ItemBody> => [
  {
    type: "tool_invocation",
    tool_name: name,
    ...(isJsonValue(args) ? { arguments: args } : {}),
    ...(callId === undefined ? {} : { tool_call_id: callId }),
    status: failed ? "failed" : "completed",
    outcome: failed ? "error" : "success"
  },
  {
    type: "tool_output",
    call_id: "",
    ...(callId === undefined ? {} : { tool_call_id: callId }),
    output,
    status: failed ? "failed" : "completed"
  }
]

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

/**
 * The thread start (when not yet started) and one `item.completed` per body, each with the next
 * item id and verification labels; a `tool_output` is linked to the latest `tool_invocation`
 * before it in `bodies` (the shape every mapper's tool results arrive in).
 */
export const completedItems = (
  c: ImportCursor,
  ts: string,
  bodies: ReadonlyArray<ItemBody>
): { cursor: ImportCursor; events: Array<ThreadEvent> } => {
  const started = startThread(c)
  let cursor = started.cursor
  const events: Array<ThreadEvent> = [...started.events]
  let lastInvocation = ""
  for (const body of bodies) {
    const n = nextItemId(cursor)
    cursor = n.cursor
    const linked: ItemBody = body.type === "tool_output" ? { ...body, call_id: lastInvocation } : body
    if (body.type === "tool_invocation") lastInvocation = n.id
    events.push(labelVerification(itemEvent("item.completed", cursor, n.id, ts, linked)))
  }
  return { cursor, events }
}
