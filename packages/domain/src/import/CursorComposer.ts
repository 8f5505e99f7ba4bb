/**
 * The pure mapping of a Cursor IDE chat ("composer") from its `state.vscdb` to ThreadEvents
 * (docs/import.md#cursor-ide-database). The importer feeds the composer's `composerData:<id>`
 * value, then its bubbles (`bubbleId:<composerId>:<bubbleId>` values, in the order of the
 * composer's `fullConversationHeadersOnly`, or the inline `conversation` of older versions). A
 * user bubble (`type: 1`, `"user"` in the older chat panel's tabs) with text opens a turn; an
 * assistant bubble (`type: 2`, `"ai"`) gives its
 * `text`, its `thinking.text` as reasoning, its `toolFormerData` tool call (a terminal command, a
 * file edit, or any other tool with its arguments and result) and its `tokenCount` as usage.
 *
 * **Gotchas**: Cursor stores a bubble's time (`createdAt`, ISO) only now and then; a bubble without
 * one takes the last time seen (the composer's `createdAt` at first), so times are never invented
 * in between. What a tool's `result` holds is not documented by Cursor: a command's exit code is
 * kept only when the result names one.
 */
import { Schema } from "effect"
import type { UsageTotals } from "../contract/Usage.ts"
import { addUsage, zeroUsage } from "../contract/Usage.ts"
import type { ImportIdentity, ImportMapper, MapStep } from "./ImportCursor.ts"
import { finishingOf, ImportCursor as ImportCursorSchema, initialCursor } from "./ImportCursor.ts"
import { counter, exitCodeOf, field, num, obj, parseJsonValue, str } from "./internal/foreignJson.ts"
import type { ItemBody } from "./internal/importTurns.ts"
import { completedItems, openTurn, seen, startThread, toolCallItems } from "./internal/importTurns.ts"
import { diffFields, replacementDiff } from "./internal/toolEvidence.ts"

/** The reducer state of a Cursor IDE composer import. */
export const CursorComposerState = Schema.Struct({ cursor: ImportCursorSchema })

/** The reducer state of a Cursor IDE composer import. */
export type CursorComposerState = typeof CursorComposerState.Type

const SAFE_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/u

/**
 * The identity a `composerData` value gives: `cursor-ide-<composerId>` (a prefix of its own, so a
 * chat Cursor also wrote as an agent transcript, `cursor-<id>`, never collides with it).
 */
export const cursorComposerIdentity = (composer: unknown): ImportIdentity | undefined => {
  const id = str(composer, "composerId")
  if (id === undefined || !SAFE_ID.test(id) || num(composer, "createdAt") === undefined) return undefined
  return { sessionId: `cursor-ide-${id}`, threadId: id }
}

const msTime = (ms: number | undefined): string =>
  ms === undefined || ms < 0 || ms > 8.64e15 ? "" : new Date(ms).toISOString()

const isoTime = (value: unknown): string => {
  if (typeof value === "number") return msTime(value)
  if (typeof value !== "string") return ""
  const ms = Date.parse(value)
  return Number.isFinite(ms) ? msTime(ms) : ""
}

/** A JSON-in-a-string field of `toolFormerData` (`rawArgs`, `params`, `result`), parsed when it is JSON. */
const jsonField = (tool: unknown, key: string): unknown => {
  const raw = field(tool, key)
  return typeof raw === "string" ? (parseJsonValue(raw) ?? raw) : raw
}

const TERMINAL_TOOLS: ReadonlySet<string> = new Set([
  "run_terminal_cmd",
  "run_terminal_command",
  "run_terminal_command_v2"
])

const EDIT_TOOLS: ReadonlySet<string> = new Set([
  "edit_file",
  "edit_file_v2",
  "search_replace",
  "write",
  "apply_patch",
  "delete_file"
])

const toolItems = (tool: unknown): Array<ItemBody> => {
  const name = str(tool, "name") ?? "unknown"
  const args = jsonField(tool, "rawArgs") ?? jsonField(tool, "params")
  const result = jsonField(tool, "result")
  const status = str(tool, "status") ?? str(obj(tool, "additionalData"), "status")
  const failed = status === "error" || status === "failed" || field(tool, "error") !== undefined
  const output = typeof result === "string"
    ? result
    : str(result, "output") ?? str(result, "stdout") ?? (result === undefined ? "" : JSON.stringify(result))
  if (TERMINAL_TOOLS.has(name)) {
    const code = exitCodeOf(field(result, "exitCode")) ?? exitCodeOf(field(result, "exit_code"))
    return [{
      type: "command_execution",
      command: str(args, "command") ?? "",
      aggregated_output: output,
      status: failed || (code !== undefined && code !== 0) ? "failed" : "completed",
      ...(code === undefined ? {} : { exit_code: code })
    }]
  }
  if (EDIT_TOOLS.has(name)) {
    const path = str(args, "target_file") ?? str(args, "file_path") ?? str(args, "path") ?? ""
    const before = str(args, "old_string")
    const after = str(args, "new_string")
    return [{
      type: "file_change",
      changes: path.length > 0 ? [{ path, kind: name === "delete_file" ? "delete" : "update" }] : [],
      status: failed ? "failed" : "completed",
      ...(path.length > 0 && before !== undefined && after !== undefined && !failed
        ? diffFields(replacementDiff(path, before, after))
        : {})
    }]
  }
  return toolCallItems(name, args, str(tool, "toolCallId"), output, failed)
}

const usageOf = (tokens: unknown): UsageTotals => ({
  input_tokens: counter(tokens, "inputTokens"),
  cached_input_tokens: 0,
  cache_creation_tokens: 0,
  output_tokens: counter(tokens, "outputTokens")
})

/** Maps one record: the `composerData` value, or a bubble. */
export const stepCursorComposer = (state: CursorComposerState, record: unknown): MapStep<CursorComposerState> => {
  if (cursorComposerIdentity(record) !== undefined) {
    const started = startThread(seen(state.cursor, msTime(num(record, "createdAt"))))
    return { state: { ...state, cursor: started.cursor }, events: started.events }
  }
  const ts = isoTime(field(record, "createdAt"))
  let cursor = seen(state.cursor, ts)
  const at = cursor.lastTs
  // The chat panel of older versions writes `type: "user"` / `"ai"` for the composer's 1 / 2.
  const kind = str(record, "type")
  const type = kind === "user" ? 1 : kind === "ai" ? 2 : num(record, "type")
  const text = str(record, "text") ?? ""
  if (type === 1) {
    if (text.trim().length === 0) return { state: { ...state, cursor }, events: [], skipped: "user bubble: no text" }
    const opened = openTurn(cursor, text, at)
    return { state: { ...state, cursor: opened.cursor }, events: opened.events }
  }
  if (type !== 2) return { state: { ...state, cursor }, events: [], skipped: `bubble type ${type ?? "missing"}` }
  const bodies: Array<ItemBody> = []
  const thinking = str(obj(record, "thinking"), "text") ?? ""
  if (thinking.length > 0) bodies.push({ type: "reasoning", text: thinking })
  if (text.length > 0) bodies.push({ type: "agent_message", text })
  const tool = obj(record, "toolFormerData")
  if (tool !== undefined && str(tool, "name") !== undefined) bodies.push(...toolItems(tool))
  cursor = { ...cursor, usage: addUsage(cursor.usage, usageOf(field(record, "tokenCount"))) }
  const emitted = completedItems(cursor, at, bodies)
  return bodies.length === 0
    ? { state: { ...state, cursor: emitted.cursor }, events: emitted.events, skipped: "assistant bubble: empty" }
    : { state: { ...state, cursor: emitted.cursor }, events: emitted.events }
}

/** The Cursor IDE composer mapper (format `cursor`, like the agent transcripts). */
export const cursorComposerMapper: ImportMapper<CursorComposerState> = {
  format: "cursor",
  state: CursorComposerState,
  identify: cursorComposerIdentity,
  initial: (identity) => ({ cursor: initialCursor(identity) }),
  step: stepCursorComposer,
  openUsage: (state) => (state.cursor.open ? state.cursor.usage : zeroUsage),
  ...finishingOf<CursorComposerState>()
}
