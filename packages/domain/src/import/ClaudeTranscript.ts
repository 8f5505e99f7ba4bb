/**
 * The pure mapping of a Claude Code transcript (`~/.claude/projects/<cwd>/<session>.jsonl`, and
 * `subagents/agent-*.jsonl`) to ThreadEvents (docs/import.md#claude-code-transcripts): one reducer
 * step per parsed record, persisted between incremental imports.
 *
 * Records with `isSidechain` in a main transcript (older versions wrote a subagent's records
 * there) are counted, not mapped: a subagent is its own session, from its own file.
 *
 * **Gotchas**: one API response is split over several lines (one content block each) that repeat
 * its `usage`; usage is kept per `message.id`, the last line's value winning, so each response is
 * counted once. A prompt is a `user` record with text that is not meta, not a tool result, not a
 * compaction summary and not a local command's echo. A tool result moved to a separate file
 * arrives here already read back by the importer (`ClaudeToolResults.ts`).
 */
import { Schema } from "effect"
import type { ThreadEvent } from "../contract/ThreadEvent.ts"
import type { UsageTotals } from "../contract/Usage.ts"
import { addUsage, UsageTotals as UsageTotalsSchema, zeroUsage } from "../contract/Usage.ts"
import { claudeBashFullOutput } from "./ClaudeToolResults.ts"
import type { ImportIdentity, ImportMapper, MapStep } from "./ImportCursor.ts"
import { finishingOf, ImportCursor as ImportCursorSchema, initialCursor } from "./ImportCursor.ts"
import { claudeBashOutcome, claudeInputDiff, claudeResultDiff } from "./internal/claudeTools.ts"
import { arr, counter, field, obj, str } from "./internal/foreignJson.ts"
import { completedItems, failTurn, itemEvent, nextItemId, openTurn, seen, startThread } from "./internal/importTurns.ts"
import { labelVerification } from "./internal/toolEvidence.ts"

const PendingTool = Schema.Struct({
  itemId: Schema.String,
  name: Schema.String,
  command: Schema.String,
  path: Schema.String,
  /** A file tool's diff from its input (old/new strings, content), for a result without a patch. */
  diff: Schema.optionalKey(Schema.String),
  /** Whether {@link PendingTool.diff} cannot show the whole change. */
  partial: Schema.optionalKey(Schema.Boolean),
  /** A `Bash` call sent to the background (its result says nothing of the exit). */
  background: Schema.optionalKey(Schema.Boolean)
})

type PendingTool = typeof PendingTool.Type

/** The reducer state of a Claude Code transcript import (persisted between incremental imports). */
export const ClaudeTranscriptState = Schema.Struct({
  cursor: ImportCursorSchema,
  messageUsage: Schema.Record(Schema.String, UsageTotalsSchema),
  pending: Schema.Record(Schema.String, PendingTool)
})

/** The reducer state of a Claude Code transcript import. */
export type ClaudeTranscriptState = typeof ClaudeTranscriptState.Type

/** The session id of a Claude Code session (and of one of its subagents). */
export const claudeSessionId = (sessionId: string, agentId?: string): string =>
  agentId === undefined ? `claude-${sessionId}` : `claude-${sessionId}-agent-${agentId}`

/**
 * The identity the first record carrying `sessionId` gives: `claude-<session id>`; a sidechain
 * record with `agentId` (a subagent file) gives `claude-<session id>-agent-<agent id>` whose
 * parent is the main session. Undefined for records without a session id.
 */
export const claudeTranscriptIdentity = (record: unknown): ImportIdentity | undefined => {
  const sessionId = str(record, "sessionId") ?? str(record, "session_id")
  if (sessionId === undefined || sessionId.length === 0) return undefined
  const agentId = str(record, "agentId")
  if (field(record, "isSidechain") === true && agentId !== undefined && agentId.length > 0) {
    const id = claudeSessionId(sessionId, agentId)
    return { sessionId: id, threadId: id, parentSessionId: claudeSessionId(sessionId) }
  }
  const id = claudeSessionId(sessionId)
  return { sessionId: id, threadId: id }
}

const usageOf = (u: unknown): UsageTotals => ({
  input_tokens: counter(u, "input_tokens"),
  cached_input_tokens: counter(u, "cache_read_input_tokens"),
  cache_creation_tokens: counter(u, "cache_creation_input_tokens"),
  output_tokens: counter(u, "output_tokens")
})

const minus = (a: UsageTotals, b: UsageTotals): UsageTotals => ({
  input_tokens: a.input_tokens - b.input_tokens,
  cached_input_tokens: a.cached_input_tokens - b.cached_input_tokens,
  cache_creation_tokens: a.cache_creation_tokens - b.cache_creation_tokens,
  output_tokens: a.output_tokens - b.output_tokens
})

/** The text of a string content or of its `text` blocks. */
export const claudeText = (content: unknown): string => {
  if (typeof content === "string") return content
  if (!Array.isArray(content)) return ""
  const parts: Array<string> = []
  for (const block of content) {
    const text = str(block, "text")
    if (str(block, "type") === "text" && text !== undefined) parts.push(text)
  }
  return parts.join("\n")
}

const LOCAL_COMMAND =
  /^\s*<(command-name|command-message|local-command-stdout|local-command-stderr|local-command-caveat)>/u

// Claude Code tells the model in a user record that a background task ended (`<task-id>`,
// `<output-file>`, `<status>`, `<summary>`): the harness speaking, not the person.
const TASK_NOTIFICATION = /^\s*<task-notification>/u

const tagText = (text: string, tag: string): string | undefined => {
  const found = new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`, "u").exec(text)?.[1]?.trim()
  return found === undefined || found.length === 0 ? undefined : found
}

/** Whether a `user` record is a prompt (docs/import.md#claude-code-transcripts). */
export const isClaudePrompt = (record: unknown): boolean => {
  if (str(record, "type") !== "user") return false
  if (field(record, "isMeta") === true || field(record, "isCompactSummary") === true) return false
  const content = field(obj(record, "message"), "content")
  if (Array.isArray(content) && content.some((b) => str(b, "type") === "tool_result")) return false
  const text = claudeText(content)
  if (text.trim().length === 0) return false
  if (LOCAL_COMMAND.test(text) || TASK_NOTIFICATION.test(text)) return false
  return !text.startsWith("[Request interrupted by user")
}

const skip = (state: ClaudeTranscriptState, reason: string): MapStep<ClaudeTranscriptState> => ({
  state,
  events: [],
  skipped: reason
})

const numbered = (
  state: ClaudeTranscriptState
): { state: ClaudeTranscriptState; id: string; events: Array<ThreadEvent> } => {
  const started = startThread(state.cursor)
  const n = nextItemId(started.cursor)
  return { state: { ...state, cursor: n.cursor }, id: n.id, events: started.events }
}

const isJson = Schema.is(Schema.Json)

const FILE_TOOLS: ReadonlySet<string> = new Set(["Edit", "MultiEdit", "Write", "NotebookEdit"])

const onToolUse = (state: ClaudeTranscriptState, block: unknown, ts: string): MapStep<ClaudeTranscriptState> => {
  const name = str(block, "name") ?? "unknown"
  const toolUseId = str(block, "id") ?? ""
  const input = field(block, "input")
  const n = numbered(state)
  const c = n.state.cursor
  const command = name === "Bash" ? str(input, "command") : undefined
  const path = FILE_TOOLS.has(name) ? str(input, "file_path") ?? str(input, "notebook_path") ?? "" : ""
  const remember = (pending: PendingTool): ClaudeTranscriptState => ({
    ...n.state,
    pending: { ...n.state.pending, [toolUseId]: pending }
  })
  if (command !== undefined) {
    const background = field(input, "run_in_background") === true
    return {
      state: remember({ itemId: n.id, name, command, path: "", ...(background ? { background } : {}) }),
      events: [
        ...n.events,
        labelVerification(itemEvent("item.started", c, n.id, ts, {
          type: "command_execution",
          command,
          aggregated_output: "",
          status: "in_progress"
        }))
      ]
    }
  }
  if (name === "WebSearch") {
    return {
      state: n.state,
      events: [
        ...n.events,
        itemEvent("item.completed", c, n.id, ts, { type: "web_search", query: str(input, "query") ?? "" })
      ]
    }
  }
  if (FILE_TOOLS.has(name)) {
    const diff = claudeInputDiff(name, input, path)
    const pending = diff === undefined ? {} : { diff: diff.diff, ...(diff.partial ? { partial: true } : {}) }
    return { state: remember({ itemId: n.id, name, command: "", path, ...pending }), events: n.events }
  }
  return {
    state: remember({ itemId: n.id, name, command: "", path: "" }),
    events: [
      ...n.events,
      itemEvent("item.started", c, n.id, ts, {
        type: "tool_invocation",
        tool_name: name,
        ...(isJson(input) ? { arguments: input } : {}),
        ...(toolUseId.length > 0 ? { tool_call_id: toolUseId } : {}),
        status: "in_progress"
      })
    ]
  }
}

const onAssistant = (state: ClaudeTranscriptState, record: unknown, ts: string): MapStep<ClaudeTranscriptState> => {
  const message = obj(record, "message")
  const messageId = str(message, "id") ?? ""
  let s = state
  const usage = obj(message, "usage")
  if (usage !== undefined && messageId.length > 0) {
    const now = usageOf(usage)
    const before = s.messageUsage[messageId] ?? zeroUsage
    s = {
      ...s,
      messageUsage: { ...s.messageUsage, [messageId]: now },
      cursor: { ...s.cursor, usage: addUsage(s.cursor.usage, minus(now, before)) }
    }
  }
  const events: Array<ThreadEvent> = []
  if (field(record, "isApiErrorMessage") === true) {
    const n = numbered(s)
    const text = claudeText(field(message, "content"))
    return {
      state: n.state,
      events: [
        ...n.events,
        itemEvent("item.completed", n.state.cursor, n.id, ts, {
          type: "error",
          message: text.length > 0 ? text : "API error"
        })
      ]
    }
  }
  const blocks = arr(message, "content") ?? []
  for (const block of blocks) {
    const type = str(block, "type")
    if (type === "text") {
      const text = str(block, "text") ?? ""
      if (text.length === 0) continue
      const n = numbered(s)
      s = n.state
      events.push(...n.events, itemEvent("item.completed", s.cursor, n.id, ts, { type: "agent_message", text }))
    } else if (type === "thinking") {
      const text = str(block, "thinking") ?? ""
      if (text.length === 0) continue
      const n = numbered(s)
      s = n.state
      events.push(...n.events, itemEvent("item.completed", s.cursor, n.id, ts, { type: "reasoning", text }))
    } else if (type === "tool_use") {
      const step = onToolUse(s, block, ts)
      s = step.state
      events.push(...step.events)
    }
  }
  return events.length === 0
    ? { state: s, events, skipped: "assistant: no text, thinking or tool use (usage counted)" }
    : { state: s, events }
}

const onToolResult = (
  state: ClaudeTranscriptState,
  block: unknown,
  record: unknown,
  ts: string
): { state: ClaudeTranscriptState; events: Array<ThreadEvent> } => {
  const toolUseId = str(block, "tool_use_id") ?? ""
  const call = state.pending[toolUseId]
  if (call === undefined) return { state, events: [] }
  const pending = { ...state.pending }
  delete pending[toolUseId]
  const s = { ...state, pending }
  const failed = field(block, "is_error") === true
  const output = claudeText(field(block, "content"))
  const c = s.cursor
  const toolUseResult = field(record, "toolUseResult")
  if (call.command.length > 0 || call.name === "Bash") {
    // A placeholder for a separated result the importer could not read: the record's stdout is whole.
    const whole = claudeBashFullOutput(output, toolUseResult) ?? output
    const outcome = claudeBashOutcome(failed, whole, toolUseResult, call.background === true)
    return {
      state: s,
      events: [
        labelVerification(itemEvent("item.completed", c, call.itemId, ts, {
          type: "command_execution",
          command: call.command,
          aggregated_output: whole,
          ...outcome
        }))
      ]
    }
  }
  if (FILE_TOOLS.has(call.name)) {
    const created = str(toolUseResult, "type") === "create"
    const inputDiff = call.diff === undefined ? undefined : { diff: call.diff, partial: call.partial === true }
    return {
      state: s,
      events: [
        itemEvent("item.completed", c, call.itemId, ts, {
          type: "file_change",
          changes: call.path.length > 0 ? [{ path: call.path, kind: created ? "add" : "update" }] : [],
          status: failed ? "failed" : "completed",
          ...(failed || call.path.length === 0 ? {} : claudeResultDiff(call.name, call.path, toolUseResult, inputDiff))
        })
      ]
    }
  }
  const n = nextItemId(c)
  return {
    state: { ...s, cursor: n.cursor },
    events: [
      itemEvent("item.completed", c, call.itemId, ts, {
        type: "tool_invocation",
        tool_name: call.name,
        ...(toolUseId.length > 0 ? { tool_call_id: toolUseId } : {}),
        status: failed ? "failed" : "completed",
        outcome: failed ? "error" : "success"
      }),
      itemEvent("item.completed", n.cursor, n.id, ts, {
        type: "tool_output",
        call_id: call.itemId,
        ...(toolUseId.length > 0 ? { tool_call_id: toolUseId } : {}),
        output,
        status: failed ? "failed" : "completed"
      })
    ]
  }
}

const onUser = (state: ClaudeTranscriptState, record: unknown, ts: string): MapStep<ClaudeTranscriptState> => {
  const content = field(obj(record, "message"), "content")
  if (isClaudePrompt(record)) {
    const opened = openTurn(state.cursor, claudeText(content), ts)
    return { state: { ...state, cursor: opened.cursor, messageUsage: {} }, events: opened.events }
  }
  if (field(record, "isMeta") === true) return skip(state, "user: meta (caveat)")
  if (field(record, "isCompactSummary") === true) {
    return skip(state, "user: compaction summary (the boundary is recorded)")
  }
  const text = claudeText(content)
  if (text.startsWith("[Request interrupted by user")) {
    const failed = failTurn(state.cursor, "interrupted by the user")
    return { state: { ...state, cursor: failed.cursor, messageUsage: {} }, events: failed.events }
  }
  if (TASK_NOTIFICATION.test(text)) {
    const task = tagText(text, "task-id")
    const path = tagText(text, "output-file")
    const status = tagText(text, "status")
    const { cursor, events } = completedItems(state.cursor, ts, [{
      type: "harness",
      event: "background_subprocess_completed",
      message: tagText(text, "summary") ?? text.trim(),
      ...(task === undefined ? {} : { task_id: task }),
      ...(path === undefined ? {} : { path }),
      ...(status === undefined ? {} : { status })
    }])
    return { state: { ...state, cursor }, events }
  }
  if (Array.isArray(content) && content.some((b) => str(b, "type") === "tool_result")) {
    let s = state
    const events: Array<ThreadEvent> = []
    for (const block of content) {
      if (str(block, "type") !== "tool_result") continue
      const step = onToolResult(s, block, record, ts)
      s = step.state
      events.push(...step.events)
    }
    return events.length === 0 ? skip(s, "user: tool result without a known call") : { state: s, events }
  }
  return skip(state, "user: local command or empty")
}

const onSystem = (state: ClaudeTranscriptState, record: unknown): MapStep<ClaudeTranscriptState> => {
  const subtype = str(record, "subtype") ?? "?"
  if (subtype !== "compact_boundary") return skip(state, `system/${subtype}`)
  const trigger = str(obj(record, "compactMetadata"), "trigger")
  const started = startThread(state.cursor)
  const event: ThreadEvent = {
    type: "thread.compact_boundary",
    thread_id: state.cursor.identity.threadId,
    trigger: trigger === "manual" ? "manual" : "auto",
    mode: "local",
    original_message_count: 0,
    compacted_message_count: 0
  }
  return { state: { ...state, cursor: started.cursor }, events: [...started.events, event] }
}

/** Maps one parsed transcript record. */
export const stepClaudeTranscript = (state: ClaudeTranscriptState, record: unknown): MapStep<ClaudeTranscriptState> => {
  const ts = str(record, "timestamp") ?? ""
  const s: ClaudeTranscriptState = { ...state, cursor: seen(state.cursor, ts) }
  const type = str(record, "type")
  // Older versions wrote a subagent's records into the main transcript: they are not its turns.
  if (field(record, "isSidechain") === true && s.cursor.identity.parentSessionId === undefined) {
    return skip(s, `sidechain ${type ?? "record"} in the main transcript (a subagent's)`)
  }
  switch (type) {
    case "user":
      return onUser(s, record, ts)
    case "assistant":
      return onAssistant(s, record, ts)
    case "system":
      return onSystem(s, record)
    default:
      return skip(s, type ?? "record without type")
  }
}

/** The Claude Code transcript mapper. */
export const claudeTranscriptMapper: ImportMapper<ClaudeTranscriptState> = {
  format: "claude",
  state: ClaudeTranscriptState,
  identify: claudeTranscriptIdentity,
  version: (record) => str(record, "version"),
  initial: (identity) => ({ cursor: initialCursor(identity), messageUsage: {}, pending: {} }),
  step: stepClaudeTranscript,
  openUsage: (state) => (state.cursor.open ? state.cursor.usage : zeroUsage),
  ...finishingOf<ClaudeTranscriptState>()
}
