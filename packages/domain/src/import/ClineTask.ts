/**
 * The pure mapping of a Cline or Roo Code task (`…/globalStorage/<extension>/tasks/<id>/ui_messages.json`,
 * one JSON array of `{ts, type: "say" | "ask", say | ask, text, partial?}`) to ThreadEvents
 * (docs/import.md#cline-and-roo-code). The importer feeds a header naming the task (its directory)
 * and the agent, then each message. `say: task` (or the first `text`) and `user_feedback` open
 * turns; `text` / `completion_result` are assistant texts, `reasoning` reasoning; `ask: command`
 * with the `command_output` chunks after it is one command; `tool` messages are file changes
 * (edits with the diff their SEARCH/REPLACE blocks make, new files with their content as added
 * lines) or tool invocations; `api_req_started` carries the request's tokens.
 *
 * **Gotchas**: a command is written when the next message that is not its output arrives (or the
 * task is finished), so its output is whole; streaming (`partial: true`) messages are skipped,
 * their final form follows them.
 */
import { Schema } from "effect"
import type { UsageTotals } from "../contract/Usage.ts"
import { addUsage, zeroUsage } from "../contract/Usage.ts"
import type { ImportIdentity, ImportMapper, MapStep } from "./ImportCursor.ts"
import { ImportCursor as ImportCursorSchema, initialCursor } from "./ImportCursor.ts"
import { counter, field, num, parseJsonValue, str } from "./internal/foreignJson.ts"
import type { ItemBody } from "./internal/importTurns.ts"
import { completedItems, finishThread, openTurn, seen, startThread } from "./internal/importTurns.ts"
import { creationDiff, diffFields, exitCodeInText, searchReplaceDiff } from "./internal/toolEvidence.ts"

/** The agents whose tasks share this format. */
export const ClineAgent = Schema.Literals(["cline", "roo"])

/** The agents whose tasks share this format. */
export type ClineAgent = typeof ClineAgent.Type

/** The reducer state of a Cline / Roo Code task import. */
export const ClineTaskState = Schema.Struct({
  cursor: ImportCursorSchema,
  /** A command whose output chunks are still arriving. */
  command: Schema.optionalKey(Schema.Struct({ command: Schema.String, output: Schema.String, ts: Schema.String }))
})

/** The reducer state of a Cline / Roo Code task import. */
export type ClineTaskState = typeof ClineTaskState.Type

/** The header the importer makes for a task: its directory name and the agent. */
export const clineTaskHeader = (agent: ClineAgent, taskId: string) => ({ clineTask: taskId, agent })

const identityOf = (agent: ClineAgent) => (record: unknown): ImportIdentity | undefined => {
  const id = str(record, "clineTask")
  if (id === undefined || id.length === 0 || str(record, "agent") !== agent) return undefined
  return { sessionId: `${agent}-${id}`, threadId: id }
}

const skip = (state: ClineTaskState, reason: string): MapStep<ClineTaskState> => ({
  state,
  events: [],
  skipped: reason
})

const emit = (state: ClineTaskState, ts: string, bodies: ReadonlyArray<ItemBody>): MapStep<ClineTaskState> => {
  const { cursor, events } = completedItems(state.cursor, ts, bodies)
  return { state: { ...state, cursor }, events }
}

/** The pending command, written as one `command_execution` (nothing when there is none). */
const flush = (state: ClineTaskState): MapStep<ClineTaskState> => {
  const pending = state.command
  if (pending === undefined) return { state, events: [] }
  const { command: _done, ...rest } = state
  const code = exitCodeInText(pending.output)
  return emit(rest, pending.ts, [{
    type: "command_execution",
    command: pending.command,
    aggregated_output: pending.output,
    status: code !== undefined && code !== 0 ? "failed" : "completed",
    ...(code === undefined ? {} : { exit_code: code })
  }])
}

const FILE_TOOLS: ReadonlySet<string> = new Set([
  "editedExistingFile",
  "newFileCreated",
  "appliedDiff",
  "insertContent",
  "searchAndReplace"
])

/**
 * The diff a file tool's message carries: an edit's SEARCH/REPLACE blocks (`replace_in_file`,
 * Roo's `apply_diff`) or a unified diff as it is; a new file's `content` as every line added.
 * A whole-file rewrite of an existing file (`content` only) has no before to diff against.
 */
const fileDiff = (name: string, path: string, tool: unknown): string | undefined => {
  const diff = str(tool, "diff")
  if (diff !== undefined) {
    return searchReplaceDiff(path, diff) ??
      (diff.startsWith("--- ") || diff.startsWith("@@") ? diff : undefined)
  }
  const content = str(tool, "content")
  return name === "newFileCreated" && content !== undefined ? creationDiff(path, content) : undefined
}

const toolItems = (text: string): Array<ItemBody> => {
  const tool = parseJsonValue(text)
  const name = str(tool, "tool") ?? "unknown"
  const path = str(tool, "path") ?? ""
  if (FILE_TOOLS.has(name)) {
    return [{
      type: "file_change",
      changes: path.length > 0 ? [{ path, kind: name === "newFileCreated" ? "add" : "update" }] : [],
      status: "completed",
      ...(path.length === 0 ? {} : diffFields(fileDiff(name, path, tool)))
    }]
  }
  return [
    { type: "tool_invocation", tool_name: name, arguments: tool ?? text, status: "completed", outcome: "success" },
    { type: "tool_output", call_id: "", output: str(tool, "content") ?? "", status: "completed" }
  ]
}

const usageOf = (text: string): UsageTotals => {
  const info = parseJsonValue(text)
  return {
    input_tokens: counter(info, "tokensIn"),
    cached_input_tokens: counter(info, "cacheReads"),
    cache_creation_tokens: counter(info, "cacheWrites"),
    output_tokens: counter(info, "tokensOut")
  }
}

const timeOf = (message: unknown): string => {
  const ms = num(message, "ts")
  if (ms === undefined || !Number.isFinite(ms) || ms < 0 || ms > 8.64e15) return ""
  return new Date(ms).toISOString()
}

const onMessage = (s: ClineTaskState, message: unknown, ts: string): MapStep<ClineTaskState> => {
  const kind = str(message, "say") ?? str(message, "ask") ?? ""
  const label = `${str(message, "type") ?? "?"} ${kind}`
  const text = str(message, "text") ?? ""
  if (field(message, "partial") === true) return skip(s, `${label}: partial (streaming)`)
  if (str(message, "type") === "say") {
    if (kind === "task" || kind === "user_feedback" || (kind === "text" && !s.cursor.started)) {
      if (text.trim().length === 0) return skip(s, `${label}: empty`)
      const opened = openTurn(s.cursor, text, ts)
      return { state: { ...s, cursor: opened.cursor }, events: opened.events }
    }
    if (kind === "text" || kind === "completion_result") {
      return text.length === 0 ? skip(s, `${label}: empty`) : emit(s, ts, [{ type: "agent_message", text }])
    }
    if (kind === "reasoning") {
      return text.length === 0 ? skip(s, `${label}: empty`) : emit(s, ts, [{ type: "reasoning", text }])
    }
    if (kind === "api_req_started") {
      return skip({ ...s, cursor: { ...s.cursor, usage: addUsage(s.cursor.usage, usageOf(text)) } }, `${label} (usage)`)
    }
    if (kind === "error") return emit(s, ts, [{ type: "error", message: text }])
    if (kind === "tool") return emit(s, ts, toolItems(text))
  }
  if (str(message, "type") === "ask" && kind === "tool") return emit(s, ts, toolItems(text))
  return skip(s, label)
}

/** Maps one record of a task: its header or a UI message. */
export const stepClineTask = (state: ClineTaskState, record: unknown): MapStep<ClineTaskState> => {
  if (str(record, "clineTask") !== undefined) {
    const started = startThread(state.cursor)
    return { state: { ...state, cursor: started.cursor }, events: started.events }
  }
  const ts = timeOf(record)
  const s: ClineTaskState = { ...state, cursor: seen(state.cursor, ts) }
  const kind = str(record, "say") ?? str(record, "ask")
  if (kind === "command_output" && s.command !== undefined && field(record, "partial") !== true) {
    const output = str(record, "text") ?? ""
    const joined = s.command.output.length === 0 ? output : `${s.command.output}\n${output}`
    return skip({ ...s, command: { ...s.command, output: joined } }, "command_output (part of its command)")
  }
  if (kind === "command_output" && field(record, "partial") === true) return skip(s, "command_output: partial")
  const flushed = flush(s)
  if (str(record, "type") === "ask" && kind === "command") {
    return {
      state: { ...flushed.state, command: { command: str(record, "text") ?? "", output: "", ts } },
      events: flushed.events,
      ...(flushed.events.length === 0 ? { skipped: "ask command (written with its output)" } : {})
    }
  }
  const step = onMessage(flushed.state, record, ts)
  if (flushed.events.length === 0) return step
  return { state: step.state, events: [...flushed.events, ...step.events] }
}

/** The task mapper of one agent (Cline or Roo Code). */
export const clineTaskMapper = (agent: ClineAgent): ImportMapper<ClineTaskState> => ({
  format: agent,
  state: ClineTaskState,
  identify: identityOf(agent),
  initial: (identity) => ({ cursor: initialCursor(identity) }),
  step: stepClineTask,
  openUsage: (state) => (state.cursor.open ? state.cursor.usage : zeroUsage),
  finish: (state) => {
    const flushed = flush(state)
    const finished = finishThread(flushed.state.cursor)
    return { state: { ...flushed.state, cursor: finished.cursor }, events: [...flushed.events, ...finished.events] }
  },
  cursor: (state) => state.cursor
})
