/**
 * The pure mapping of a GitHub Copilot CLI session (`~/.copilot/session-state/<id>/events.jsonl`,
 * one `{type, data, id, timestamp, parentId}` record a line) to ThreadEvents
 * (docs/import.md#github-copilot-cli). `user.message` opens a turn; `assistant.message` gives its
 * text (and `reasoningText`); a tool call is written when `tool.execution_complete` arrives, with
 * the name and arguments its request (`toolRequests[]` or `tool.execution_start`) gave: `bash` /
 * `powershell` become commands, `edit` / `create` / `str_replace_editor` file changes, anything
 * else a tool invocation with its output. `session.error` becomes an error item,
 * `session.compaction_complete` the compaction boundary. The record types come from the Copilot
 * SDK's `session-events.schema.json`; every type not mapped here is counted by name.
 *
 * **Gotchas**: tokens come from `assistant.usage` records when the log has them, else from the
 * `outputTokens` newer versions put on `assistant.message` (output only); a log with neither
 * carries only the session's totals in `session.shutdown.modelMetrics`, counted then (once)
 * into the open turn. A tool request whose completion never arrives writes nothing.
 */
import { Schema } from "effect"
import type { ThreadEvent } from "../contract/ThreadEvent.ts"
import type { UsageTotals } from "../contract/Usage.ts"
import { addUsage, zeroUsage } from "../contract/Usage.ts"
import type { ImportIdentity, ImportMapper, MapStep } from "./ImportCursor.ts"
import { finishingOf, ImportCursor as ImportCursorSchema, initialCursor } from "./ImportCursor.ts"
import { arr, counter, field, obj, parseJsonValue, str } from "./internal/foreignJson.ts"
import type { ItemBody } from "./internal/importTurns.ts"
import { completedItems, openTurn, seen, startThread } from "./internal/importTurns.ts"
import { creationDiff, diffFields, exitCodeInText, replacementDiff } from "./internal/toolEvidence.ts"

/** A tool request waiting for its completion: its name and arguments (as JSON). */
const PendingCall = Schema.Struct({ name: Schema.String, arguments: Schema.Json })

/** The reducer state of a Copilot CLI session import. */
export const CopilotEventsState = Schema.Struct({
  cursor: ImportCursorSchema,
  pending: Schema.Record(Schema.String, PendingCall),
  /** Whether an `assistant.usage` record was seen (then `session.shutdown` totals are not added). */
  usageSeen: Schema.Boolean,
  /** Whether an `assistant.message` carried `outputTokens` (counted as the turn's output). */
  messageTokens: Schema.optionalKey(Schema.Boolean)
})

/** The reducer state of a Copilot CLI session import. */
export type CopilotEventsState = typeof CopilotEventsState.Type

const isJson = Schema.is(Schema.Json)

const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)$/u

/** The identity `session.start` gives: `copilot-<sessionId>`. */
export const copilotIdentity = (record: unknown): ImportIdentity | undefined => {
  if (str(record, "type") !== "session.start") return undefined
  const id = str(obj(record, "data"), "sessionId")
  if (id === undefined || id.length === 0) return undefined
  return { sessionId: `copilot-${id}`, threadId: id }
}

const SHELL_TOOLS: ReadonlySet<string> = new Set(["bash", "powershell", "shell", "run_in_terminal"])
const EDIT_TOOLS: ReadonlySet<string> = new Set(["edit", "create", "str_replace_editor", "write", "apply_patch"])

/** Arguments arrive as an object, or (in `toolRequests`) sometimes as a JSON string. */
const argsOf = (value: unknown): Schema.Json => {
  if (typeof value === "string") return parseJsonValue(value) ?? value
  return isJson(value) ? value : null
}

const resultText = (data: unknown): string => {
  const result = field(data, "result")
  if (typeof result === "string") return result
  const content = str(result, "content") ?? str(result, "detailedContent")
  if (content !== undefined) return content
  const error = field(data, "error")
  if (typeof error === "string") return error
  return str(error, "message") ?? ""
}

const COPILOT_EXIT = /<exited with exit code (-?\d+)>\s*$/u

const exitOf = (output: string): number | undefined => {
  const m = COPILOT_EXIT.exec(output)
  if (m !== null) return Number(m[1])
  return exitCodeInText(output)
}

const toolItems = (call: { name: string; arguments: Schema.Json }, callId: string, data: unknown): Array<ItemBody> => {
  const failed = field(data, "success") === false
  const output = resultText(data)
  const args = call.arguments
  if (SHELL_TOOLS.has(call.name)) {
    const code = exitOf(output)
    return [{
      type: "command_execution",
      command: str(args, "command") ?? "",
      aggregated_output: output,
      status: failed || (code !== undefined && code !== 0) ? "failed" : "completed",
      ...(code === undefined ? {} : { exit_code: code })
    }]
  }
  if (EDIT_TOOLS.has(call.name)) {
    const path = str(args, "path") ?? str(args, "file_path") ?? ""
    const command = str(args, "command")
    const isCreate = call.name === "create" || command === "create"
    const oldText = str(args, "old_str")
    const newText = str(args, "new_str")
    const content = str(args, "file_text") ?? str(args, "content")
    const diff = failed || path.length === 0
      ? undefined
      : isCreate && content !== undefined
      ? creationDiff(path, content)
      : oldText !== undefined && newText !== undefined
      ? replacementDiff(path, oldText, newText)
      : undefined
    return [{
      type: "file_change",
      changes: path.length > 0 ? [{ path, kind: isCreate ? "add" : "update" }] : [],
      status: failed ? "failed" : "completed",
      ...(diff === undefined ? {} : diffFields(diff))
    }]
  }
  return [
    {
      type: "tool_invocation",
      tool_name: call.name,
      arguments: args,
      tool_call_id: callId,
      status: failed ? "failed" : "completed",
      outcome: failed ? "error" : "success"
    },
    { type: "tool_output", call_id: "", tool_call_id: callId, output, status: failed ? "failed" : "completed" }
  ]
}

const skip = (state: CopilotEventsState, reason: string): MapStep<CopilotEventsState> => ({
  state,
  events: [],
  skipped: reason
})

const emit = (state: CopilotEventsState, ts: string, bodies: ReadonlyArray<ItemBody>): MapStep<CopilotEventsState> => {
  const { cursor, events } = completedItems(state.cursor, ts, bodies)
  return { state: { ...state, cursor }, events }
}

const addTokens = (state: CopilotEventsState, u: UsageTotals): CopilotEventsState => ({
  ...state,
  cursor: { ...state.cursor, usage: addUsage(state.cursor.usage, u) }
})

const usageOf = (data: unknown): UsageTotals => ({
  input_tokens: counter(data, "inputTokens"),
  cached_input_tokens: counter(data, "cacheReadTokens"),
  cache_creation_tokens: counter(data, "cacheWriteTokens"),
  output_tokens: counter(data, "outputTokens")
})

/** The contract's compaction trigger for the SDK schema's `CompactionTrigger`. */
const compactionTrigger = (trigger: string | undefined): "manual" | "auto" | "recovery" | "model_switch" => {
  if (trigger === "manual" || trigger === "model_switch") return trigger
  // A compaction forced by a context-limit response, before the request is retried.
  return trigger === "context_limit_retry" ? "recovery" : "auto"
}

/**
 * `session.compaction_complete`: a successful compaction is the conversation's compaction
 * boundary (message counts from the record: before, and before minus removed), a failed one an
 * error item naming the failure. The compaction call's own tokens are not the turn's usage.
 */
const onCompaction = (s: CopilotEventsState, ts: string, data: unknown): MapStep<CopilotEventsState> => {
  if (field(data, "success") !== true) {
    const reason = str(data, "error") ?? "no reason given"
    return emit(s, ts, [{ type: "error", message: `compaction failed: ${reason}` }])
  }
  const before = counter(data, "preCompactionMessagesLength")
  const started = startThread(s.cursor)
  const event: ThreadEvent = {
    type: "thread.compact_boundary",
    thread_id: started.cursor.identity.threadId,
    trigger: compactionTrigger(str(data, "trigger")),
    mode: "local",
    original_message_count: before,
    compacted_message_count: Math.max(0, before - counter(data, "messagesRemoved"))
  }
  return { state: { ...s, cursor: started.cursor }, events: [...started.events, event] }
}

/** Maps one Copilot CLI event record. */
export const stepCopilotEvents = (state: CopilotEventsState, record: unknown): MapStep<CopilotEventsState> => {
  // A timestamp that is not an RFC 3339 time (redacted logs hold placeholders) is not a source time.
  const raw = str(record, "timestamp") ?? ""
  const ts = RFC3339.test(raw) ? raw : ""
  const s: CopilotEventsState = { ...state, cursor: seen(state.cursor, ts) }
  const type = str(record, "type")
  const data = obj(record, "data")
  if (type === "session.start") {
    const started = startThread(s.cursor)
    return { state: { ...s, cursor: started.cursor }, events: started.events }
  }
  if (type === "user.message") {
    const text = str(data, "content") ?? ""
    if (text.trim().length === 0) return skip(s, "user.message: empty")
    const opened = openTurn(s.cursor, text, ts)
    return { state: { ...s, cursor: opened.cursor }, events: opened.events }
  }
  if (type === "assistant.message") {
    const tokens = counter(data, "outputTokens")
    let next = tokens > 0 && !s.usageSeen
      ? { ...addTokens(s, { ...zeroUsage, output_tokens: tokens }), messageTokens: true }
      : s
    for (const request of arr(data, "toolRequests") ?? []) {
      const id = str(request, "toolCallId")
      if (id !== undefined) {
        next = {
          ...next,
          pending: {
            ...next.pending,
            [id]: { name: str(request, "name") ?? "unknown", arguments: argsOf(field(request, "arguments")) }
          }
        }
      }
    }
    const bodies: Array<ItemBody> = []
    const reasoning = str(data, "reasoningText") ?? ""
    if (reasoning.length > 0) bodies.push({ type: "reasoning", text: reasoning })
    const text = str(data, "content") ?? ""
    if (text.length > 0) bodies.push({ type: "agent_message", text })
    if (bodies.length === 0) {
      return skip(next, "assistant.message: tool requests only (written when their executions complete)")
    }
    return emit(next, ts, bodies)
  }
  if (type === "assistant.reasoning") {
    const text = str(data, "content") ?? ""
    return text.length === 0 ? skip(s, "assistant.reasoning: empty") : emit(s, ts, [{ type: "reasoning", text }])
  }
  if (type === "tool.execution_start") {
    const id = str(data, "toolCallId")
    if (id === undefined) return skip(s, "tool.execution_start: no toolCallId")
    const known = s.pending[id]
    const name = str(data, "toolName") ?? known?.name ?? "unknown"
    const args = field(data, "arguments") === undefined ? known?.arguments ?? null : argsOf(field(data, "arguments"))
    return skip(
      { ...s, pending: { ...s.pending, [id]: { name, arguments: args } } },
      "tool.execution_start (written when it completes)"
    )
  }
  if (type === "tool.execution_complete") {
    const id = str(data, "toolCallId") ?? ""
    const call = s.pending[id] ?? { name: str(data, "toolName") ?? "unknown", arguments: null }
    const { [id]: _done, ...rest } = s.pending
    return emit({ ...s, pending: rest }, ts, toolItems(call, id, data))
  }
  if (type === "assistant.usage") {
    return skip(addTokens({ ...s, usageSeen: true }, usageOf(data)), "assistant.usage (counted in the turn's usage)")
  }
  if (type === "session.shutdown") {
    if (!s.cursor.open) return skip(s, "session.shutdown: token totals with no open turn (not counted)")
    if (s.usageSeen || s.messageTokens === true) {
      return skip(s, "session.shutdown (usage already counted from its messages)")
    }
    const metrics = obj(data, "modelMetrics")
    let total = zeroUsage
    for (const model of Object.values(metrics ?? {})) total = addUsage(total, usageOf(obj(model, "usage")))
    return skip(addTokens({ ...s, usageSeen: true }, total), "session.shutdown (its token totals counted once)")
  }
  if (type === "session.error") {
    const message = str(data, "message") ?? str(data, "errorType") ?? "error"
    return emit(s, ts, [{ type: "error", message }])
  }
  if (type === "session.compaction_complete") return onCompaction(s, ts, data)
  return skip(s, type === undefined ? "record without type" : type)
}

/** The GitHub Copilot CLI session mapper. */
export const copilotEventsMapper: ImportMapper<CopilotEventsState> = {
  format: "copilot",
  state: CopilotEventsState,
  identify: copilotIdentity,
  version: (
    record
  ) => (str(record, "type") === "session.start" ? str(obj(record, "data"), "copilotVersion") : undefined),
  initial: (identity) => ({ cursor: initialCursor(identity), pending: {}, usageSeen: false }),
  step: stepCopilotEvents,
  openUsage: (state) => (state.cursor.open ? state.cursor.usage : zeroUsage),
  ...finishingOf<CopilotEventsState>()
}
