/**
 * The pure mapping of an OpenCode session as `opencode export` writes it (one JSON object
 * `{info, messages: [{info, parts}]}`) to ThreadEvents (docs/import.md#opencode). The importer feeds
 * `info` and then each message. A user message's `text` parts are its prompt; an assistant
 * message's `text` parts are texts, `reasoning` parts reasoning, `tool` parts commands (`bash`),
 * file changes (`edit` / `write` / `patch`, with the unified diff OpenCode keeps in the tool's
 * metadata) or tool invocations; `step-finish` parts carry the step's tokens.
 *
 * **Gotchas**: a message's time is its `info.time.created` (milliseconds); tokens are counted from
 * `step-finish` parts only, never also from the message's own `info.tokens` (their sum).
 */
import { Schema } from "effect"
import type { UsageTotals } from "../contract/Usage.ts"
import { addUsage, zeroUsage } from "../contract/Usage.ts"
import type { ImportIdentity, ImportMapper, MapStep } from "./ImportCursor.ts"
import { finishingOf, ImportCursor as ImportCursorSchema, initialCursor } from "./ImportCursor.ts"
import { arr, counter, field, num, obj, str } from "./internal/foreignJson.ts"
import type { ItemBody } from "./internal/importTurns.ts"
import { completedItems, openTurn, seen, startThread, toolCallItems } from "./internal/importTurns.ts"
import { diffFields } from "./internal/toolEvidence.ts"

/** The reducer state of an OpenCode session import. */
export const OpenCodeExportState = Schema.Struct({ cursor: ImportCursorSchema })

/** The reducer state of an OpenCode session import. */
export type OpenCodeExportState = typeof OpenCodeExportState.Type

/**
 * The identity an export's `info` gives: `opencode-<id>` (OpenCode's ids are `ses_…`); a subagent's
 * session names its parent (`parentID`) as `opencode-<parent id>`.
 */
export const openCodeIdentity = (info: unknown): ImportIdentity | undefined => {
  const id = str(info, "id")
  if (id === undefined || !id.startsWith("ses") || field(info, "time") === undefined) return undefined
  const parent = str(info, "parentID")
  return {
    sessionId: `opencode-${id}`,
    threadId: id,
    ...(parent === undefined || parent.length === 0 ? {} : { parentSessionId: `opencode-${parent}` })
  }
}

const msTime = (value: unknown): string => {
  const ms = num(obj(value, "time"), "created")
  return ms === undefined || !Number.isFinite(ms) || ms < 0 || ms > 8.64e15 ? "" : new Date(ms).toISOString()
}

const FILE_TOOLS: ReadonlySet<string> = new Set(["edit", "write", "patch", "multiedit"])

const toolItems = (part: unknown): Array<ItemBody> => {
  const name = str(part, "tool") ?? "unknown"
  const state = obj(part, "state")
  const input = field(state, "input")
  const metadata = obj(state, "metadata")
  const failed = str(state, "status") === "error"
  const output = str(state, "output") ?? str(state, "error") ?? ""
  if (name === "bash") {
    const exit = num(metadata, "exit")
    const code = exit !== undefined && Number.isInteger(exit) ? exit : undefined
    return [{
      type: "command_execution",
      command: str(input, "command") ?? "",
      aggregated_output: str(metadata, "output") ?? output,
      status: failed || (code !== undefined && code !== 0) ? "failed" : "completed",
      ...(code === undefined ? {} : { exit_code: code })
    }]
  }
  if (FILE_TOOLS.has(name)) {
    const path = str(input, "filePath") ?? str(input, "path") ?? ""
    const diff = str(metadata, "diff")
    return [{
      type: "file_change",
      changes: path.length > 0
        ? [{ path, kind: name === "write" && metadata?.["exists"] === false ? "add" : "update" }]
        : [],
      status: failed ? "failed" : "completed",
      ...(diff === undefined || failed ? {} : diffFields(diff))
    }]
  }
  return toolCallItems(name, input, str(part, "callID"), output, failed)
}

const usageOf = (tokens: unknown): UsageTotals => ({
  input_tokens: counter(tokens, "input"),
  cached_input_tokens: counter(obj(tokens, "cache"), "read"),
  cache_creation_tokens: counter(obj(tokens, "cache"), "write"),
  output_tokens: counter(tokens, "output") + counter(tokens, "reasoning")
})

/** Maps one record: the export's `info`, or a message `{info, parts}`. */
export const stepOpenCodeExport = (state: OpenCodeExportState, record: unknown): MapStep<OpenCodeExportState> => {
  if (openCodeIdentity(record) !== undefined) {
    const started = startThread(seen(state.cursor, msTime(record)))
    return { state: { ...state, cursor: started.cursor }, events: started.events }
  }
  const info = obj(record, "info")
  const parts = arr(record, "parts") ?? []
  const ts = msTime(info)
  let cursor = seen(state.cursor, ts)
  const role = str(info, "role")
  if (role === "user") {
    const text = parts.flatMap((p) =>
      str(p, "type") === "text" && field(p, "synthetic") !== true ? [str(p, "text") ?? ""] : []
    ).join("\n")
    if (text.trim().length === 0) return { state: { ...state, cursor }, events: [], skipped: "user message: no text" }
    const opened = openTurn(cursor, text, ts)
    return { state: { ...state, cursor: opened.cursor }, events: opened.events }
  }
  if (role !== "assistant") {
    return { state: { ...state, cursor }, events: [], skipped: `message ${role ?? "without role"}` }
  }
  const bodies: Array<ItemBody> = []
  for (const part of parts) {
    const type = str(part, "type")
    const text = str(part, "text") ?? ""
    if (type === "text" && text.length > 0) bodies.push({ type: "agent_message", text })
    else if (type === "reasoning" && text.length > 0) bodies.push({ type: "reasoning", text })
    else if (type === "tool") bodies.push(...toolItems(part))
    else if (type === "step-finish") {
      cursor = { ...cursor, usage: addUsage(cursor.usage, usageOf(field(part, "tokens"))) }
    }
  }
  const error = obj(info, "error")
  if (error !== undefined) {
    bodies.push({ type: "error", message: str(obj(error, "data"), "message") ?? str(error, "name") ?? "error" })
  }
  const emitted = completedItems(cursor, ts, bodies)
  cursor = emitted.cursor
  const events = emitted.events
  return bodies.length === 0
    ? { state: { ...state, cursor }, events, skipped: "assistant message: no text or tool parts (usage counted)" }
    : { state: { ...state, cursor }, events }
}

/** The OpenCode export mapper. */
export const openCodeExportMapper: ImportMapper<OpenCodeExportState> = {
  format: "opencode",
  state: OpenCodeExportState,
  identify: openCodeIdentity,
  initial: (identity) => ({ cursor: initialCursor(identity) }),
  step: stepOpenCodeExport,
  openUsage: (state) => (state.cursor.open ? state.cursor.usage : zeroUsage),
  ...finishingOf<OpenCodeExportState>()
}
