/**
 * The pure mapping of a Cursor agent transcript (`~/.cursor/projects/<project>/agent-transcripts/<id>.jsonl`
 * or `<id>/<id>.jsonl`, one `{role, message: {content: [...]}}` record a line) to ThreadEvents
 * (docs/import.md#cursor-agent-transcripts). A user record with text opens a turn (a
 * `<user_query>` wrapper is removed); assistant `text` blocks are texts, `thinking` blocks
 * reasoning; `tool_use` / `tool_call` blocks and `tool_result` contents, which most transcripts
 * leave out, are tool invocations and outputs; `{"type": "turn_ended"}` closes the turn.
 *
 * **Gotchas**: a transcript names no session, carries no time, no token counts, no tool call ids
 * and no exit codes: the session is named after the file (`cursor-<id>`), its times are the
 * file's, and its usage is zero — nothing of that is invented.
 */
import { Schema } from "effect"
import type { ThreadEvent } from "../contract/ThreadEvent.ts"
import { zeroUsage } from "../contract/Usage.ts"
import type { ImportMapper, MapStep } from "./ImportCursor.ts"
import { finishingOf, ImportCursor as ImportCursorSchema, initialCursor } from "./ImportCursor.ts"
import { arr, field, obj, str } from "./internal/foreignJson.ts"
import type { ItemBody } from "./internal/importTurns.ts"
import { closeTurn, itemEvent, nextItemId, openTurn, startThread } from "./internal/importTurns.ts"

/** The reducer state of a Cursor transcript import. */
export const CursorTranscriptState = Schema.Struct({ cursor: ImportCursorSchema })

/** The reducer state of a Cursor transcript import. */
export type CursorTranscriptState = typeof CursorTranscriptState.Type

const isJson = Schema.is(Schema.Json)

const QUERY = /^\s*<user_query>\s*([\s\S]*?)\s*<\/user_query>\s*$/u

const textOf = (content: unknown): string => {
  if (typeof content === "string") return content
  return (Array.isArray(content) ? content : []).flatMap((b) => {
    const text = str(b, "text")
    return text === undefined ? [] : [text]
  }).join("\n")
}

const skip = (state: CursorTranscriptState, reason: string): MapStep<CursorTranscriptState> => ({
  state,
  events: [],
  skipped: reason
})

const emit = (state: CursorTranscriptState, bodies: ReadonlyArray<ItemBody>): MapStep<CursorTranscriptState> => {
  const started = startThread(state.cursor)
  let cursor = started.cursor
  const events: Array<ThreadEvent> = [...started.events]
  for (const body of bodies) {
    const n = nextItemId(cursor)
    cursor = n.cursor
    events.push(itemEvent("item.completed", cursor, n.id, "", body))
  }
  return { state: { ...state, cursor }, events }
}

/** Maps one transcript record. */
export const stepCursorTranscript = (
  state: CursorTranscriptState,
  record: unknown
): MapStep<CursorTranscriptState> => {
  if (str(record, "type") === "turn_ended") {
    const closed = closeTurn(state.cursor)
    return closed.events.length === 0
      ? skip(state, "turn_ended: no open turn")
      : { state: { ...state, cursor: closed.cursor }, events: closed.events }
  }
  const role = str(record, "role")
  const content = arr(obj(record, "message"), "content") ?? []
  if (role === "user") {
    const results = content.filter((b) => str(b, "type") === "tool_result" || str(b, "type") === "tool-result")
    if (results.length > 0) {
      return emit(
        state,
        results.map((b) => ({
          type: "tool_output",
          call_id: "",
          output: textOf(field(b, "content")),
          status: "completed"
        }))
      )
    }
    const raw = textOf(content)
    const text = QUERY.exec(raw)?.[1] ?? raw
    if (text.trim().length === 0) return skip(state, "user record: no text")
    const opened = openTurn(state.cursor, text, "")
    return { state: { ...state, cursor: opened.cursor }, events: opened.events }
  }
  if (role === "assistant") {
    const bodies: Array<ItemBody> = []
    for (const block of content) {
      const type = str(block, "type")
      if (type === "thinking") {
        const text = str(block, "thinking") ?? ""
        if (text.length > 0) bodies.push({ type: "reasoning", text })
      } else if (type === "tool_use" || type === "tool_call") {
        const input = field(block, "input")
        bodies.push({
          type: "tool_invocation",
          tool_name: str(block, "name") ?? "unknown",
          ...(isJson(input) ? { arguments: input } : {}),
          status: "completed",
          outcome: "success"
        })
      } else {
        const text = str(block, "text") ?? ""
        if (text.length > 0) bodies.push({ type: "agent_message", text })
      }
    }
    return bodies.length === 0 ? skip(state, "assistant record: no text") : emit(state, bodies)
  }
  return skip(state, role === undefined ? `record ${str(record, "type") ?? "without role"}` : `role ${role}`)
}

/** The Cursor agent transcript mapper (its identity comes from the file name). */
export const cursorTranscriptMapper: ImportMapper<CursorTranscriptState> = {
  format: "cursor",
  state: CursorTranscriptState,
  identify: () => undefined,
  initial: (identity) => ({ cursor: initialCursor(identity) }),
  step: stepCursorTranscript,
  openUsage: (state) => (state.cursor.open ? state.cursor.usage : zeroUsage),
  ...finishingOf<CursorTranscriptState>()
}
