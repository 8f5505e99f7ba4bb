/**
 * The pure mapping of a Gemini CLI session (`~/.gemini/tmp/<project>/chats/session-*.json`, one
 * JSON object with `messages[]`, or the newer JSONL form: a header line, message lines and
 * `$set` patches) to ThreadEvents (docs/import.md#gemini-cli-sessions). The importer feeds the
 * header and then each message as one record, whichever form the file has.
 *
 * The JSONL form appends a message again, whole, under the same id as it changes (tool results
 * arriving): only the items it did not have before are written. A `$set` whose `messages` is a
 * checkpoint feeds its messages through the same rule (those already seen write nothing new). A
 * `{"$rewindTo": id}` drops messages from the conversation in Gemini CLI; the log is append-only,
 * so what was written stays and the open turn ends as `turn.failed` saying it was rewound.
 *
 * **Gotchas**: a message's `tokens` are counted once per message id (the JSONL form may repeat a
 * message when it is updated); the last value wins.
 */
import { Schema } from "effect"
import type { ThreadEvent } from "../contract/ThreadEvent.ts"
import type { UsageTotals } from "../contract/Usage.ts"
import { addUsage, UsageTotals as UsageTotalsSchema, zeroUsage } from "../contract/Usage.ts"
import type { ImportIdentity, ImportMapper, MapStep } from "./ImportCursor.ts"
import { finishingOf, ImportCursor as ImportCursorSchema, initialCursor } from "./ImportCursor.ts"
import { arr, counter, field, obj, str } from "./internal/foreignJson.ts"
import { geminiChangeKind, geminiFileDiff, geminiShellOutcome } from "./internal/geminiTools.ts"
import type { ItemBody } from "./internal/importTurns.ts"
import {
  completedItems,
  failTurn,
  itemEvent,
  nextItemId,
  openTurn,
  seen,
  startThread,
  toolCallItems
} from "./internal/importTurns.ts"

/** The reducer state of a Gemini CLI session import. */
export const GeminiSessionState = Schema.Struct({
  cursor: ImportCursorSchema,
  messageUsage: Schema.Record(Schema.String, UsageTotalsSchema),
  /** Items already written per message id (the JSONL form appends a message again as it changes). */
  emitted: Schema.optionalKey(Schema.Record(Schema.String, Schema.Int))
})

/** The reducer state of a Gemini CLI session import. */
export type GeminiSessionState = typeof GeminiSessionState.Type

/** The identity a session header gives: `gemini-<sessionId>` (the header has `projectHash`). */
export const geminiSessionIdentity = (record: unknown): ImportIdentity | undefined => {
  const id = str(record, "sessionId")
  if (id === undefined || id.length === 0 || str(record, "projectHash") === undefined) return undefined
  return { sessionId: `gemini-${id}`, threadId: id }
}

const textOf = (content: unknown): string => {
  if (typeof content === "string") return content
  return (Array.isArray(content) ? content : []).flatMap((part) => {
    const text = str(part, "text")
    return text === undefined ? [] : [text]
  }).join("\n")
}

const toolOutput = (call: unknown): string =>
  (arr(call, "result") ?? []).map((r) => {
    const response = obj(obj(r, "functionResponse"), "response")
    const output = field(response, "output") ?? field(response, "error")
    return typeof output === "string" ? output : output === undefined ? "" : JSON.stringify(output)
  }).join("\n")

const FILE_TOOLS: ReadonlySet<string> = new Set(["replace", "write_file", "edit"])

/** The items of one tool call (an invocation and its output, or one item for shell, files and search). */
const toolItems = (call: unknown): Array<ItemBody> => {
  const name = str(call, "name") ?? "unknown"
  const args = field(call, "args")
  const failed = str(call, "status") === "error" || str(call, "status") === "cancelled"
  const output = toolOutput(call)
  if (name === "run_shell_command") {
    return [{
      type: "command_execution",
      command: str(args, "command") ?? "",
      aggregated_output: output,
      ...geminiShellOutcome(failed, output)
    }]
  }
  if (FILE_TOOLS.has(name)) {
    const path = str(args, "file_path") ?? str(args, "absolute_path") ?? ""
    return [{
      type: "file_change",
      changes: path.length > 0 ? [{ path, kind: geminiChangeKind(name, output) }] : [],
      status: failed ? "failed" : "completed",
      ...(failed || path.length === 0 ? {} : geminiFileDiff(name, args, path, field(call, "resultDisplay"), output))
    }]
  }
  if (name === "google_web_search" || name === "web_search") {
    return [{ type: "web_search", query: str(args, "query") ?? "" }]
  }
  return toolCallItems(name, args, str(call, "id"), output, failed)
}

const skip = (state: GeminiSessionState, reason: string): MapStep<GeminiSessionState> => ({
  state,
  events: [],
  skipped: reason
})

const onGemini = (state: GeminiSessionState, record: unknown, ts: string): MapStep<GeminiSessionState> => {
  let s = state
  const id = str(record, "id") ?? ""
  const tokens = obj(record, "tokens")
  if (tokens !== undefined && id.length > 0) {
    const now: UsageTotals = {
      input_tokens: counter(tokens, "input"),
      cached_input_tokens: counter(tokens, "cached"),
      cache_creation_tokens: 0,
      output_tokens: counter(tokens, "output")
    }
    const before = s.messageUsage[id] ?? zeroUsage
    const delta: UsageTotals = {
      input_tokens: now.input_tokens - before.input_tokens,
      cached_input_tokens: now.cached_input_tokens - before.cached_input_tokens,
      cache_creation_tokens: 0,
      output_tokens: now.output_tokens - before.output_tokens
    }
    s = {
      ...s,
      messageUsage: { ...s.messageUsage, [id]: now },
      cursor: { ...s.cursor, usage: addUsage(s.cursor.usage, delta) }
    }
  }
  const bodies: Array<ItemBody> = []
  for (const thought of arr(record, "thoughts") ?? []) {
    const subject = str(thought, "subject") ?? ""
    const description = str(thought, "description") ?? ""
    const text = subject.length > 0 && description.length > 0 ? `**${subject}** ${description}` : subject + description
    if (text.length > 0) bodies.push({ type: "reasoning", text })
  }
  const text = textOf(field(record, "content"))
  if (text.length > 0) bodies.push({ type: "agent_message", text })
  for (const call of arr(record, "toolCalls") ?? []) bodies.push(...toolItems(call))
  if (bodies.length === 0) return { ...skip(s, "gemini message: no text, thoughts or tool calls (usage counted)") }
  const before = id.length > 0 ? s.emitted?.[id] ?? 0 : 0
  const fresh = bodies.slice(before)
  if (fresh.length === 0) return skip(s, "gemini message: repeated (an update with nothing new)")
  if (id.length > 0) s = { ...s, emitted: { ...s.emitted, [id]: bodies.length } }
  const { cursor, events } = completedItems(s.cursor, ts, fresh)
  return { state: { ...s, cursor }, events }
}

/** Maps one Gemini record: the session header, a message, or a `$set` patch. */
export const stepGeminiSession = (state: GeminiSessionState, record: unknown): MapStep<GeminiSessionState> => {
  const ts = str(record, "timestamp") ?? str(record, "startTime") ?? ""
  const s: GeminiSessionState = { ...state, cursor: seen(state.cursor, ts) }
  if (geminiSessionIdentity(record) !== undefined) {
    const started = startThread(s.cursor)
    return { state: { ...s, cursor: started.cursor }, events: started.events }
  }
  const type = str(record, "type")
  if (type === "user") {
    const text = textOf(field(record, "content"))
    const id = str(record, "id") ?? ""
    if (id.length > 0 && s.emitted?.[id] !== undefined) return skip(s, "user message: repeated (an update)")
    if (text.trim().length === 0) return skip(s, "user message: empty")
    const opened = openTurn(s.cursor, text, ts)
    const emitted = id.length > 0 ? { emitted: { ...s.emitted, [id]: 1 } } : {}
    return { state: { ...s, ...emitted, cursor: opened.cursor, messageUsage: {} }, events: opened.events }
  }
  const rewind = field(record, "$rewindTo")
  if (typeof rewind === "string") {
    const failed = failTurn(
      s.cursor,
      `rewound in Gemini CLI to message ${rewind}: what follows it was dropped from the conversation`
    )
    return failed.events.length === 0
      ? skip(s, "$rewindTo: no open turn")
      : { state: { ...s, cursor: failed.cursor, messageUsage: {} }, events: failed.events }
  }
  const checkpoint = arr(obj(record, "$set"), "messages")
  if (checkpoint !== undefined) {
    let next = s
    const events: Array<ThreadEvent> = []
    for (const message of checkpoint) {
      const step = stepGeminiSession(next, message)
      next = step.state
      events.push(...step.events)
    }
    return events.length === 0 ? skip(next, "$set: messages checkpoint (nothing new)") : { state: next, events }
  }
  if (type === "gemini") return onGemini(s, record, ts)
  if (type === "error") {
    const started = startThread(s.cursor)
    const n = nextItemId(started.cursor)
    return {
      state: { ...s, cursor: n.cursor },
      events: [
        ...started.events,
        itemEvent("item.completed", n.cursor, n.id, ts, { type: "error", message: textOf(field(record, "content")) })
      ]
    }
  }
  if (field(record, "$set") !== undefined) return skip(s, "$set: metadata patch")
  return skip(s, type === undefined ? "record without type" : `message ${type}`)
}

/** The Gemini CLI session mapper. */
export const geminiSessionMapper: ImportMapper<GeminiSessionState> = {
  format: "gemini",
  state: GeminiSessionState,
  identify: geminiSessionIdentity,
  initial: (identity) => ({ cursor: initialCursor(identity), messageUsage: {} }),
  step: stepGeminiSession,
  openUsage: (state) => (state.cursor.open ? state.cursor.usage : zeroUsage),
  ...finishingOf<GeminiSessionState>()
}
