/**
 * The pure mapping of a Codex CLI rollout (`~/.codex/sessions/…/rollout-*.jsonl`) to ThreadEvents
 * (docs/import.md#codex-rollouts): one reducer step per parsed record, so an import can stop after
 * any record and resume from the persisted state. Records that duplicate others (`event_msg`
 * copies of response items), carry only settings (`turn_context`) or are unknown produce nothing
 * and say why, so the import report can count them.
 *
 * **Gotchas**: token usage is counted as deltas of the cumulative `total_token_usage`, so the many
 * repeated `token_count` events with unchanged totals count once; a shell call is written when
 * its output arrives (as `item.started` first, so a call whose output never came still shows).
 */
import { Schema } from "effect"
import type { ThreadEvent } from "../contract/ThreadEvent.ts"
import type { FileUpdateChange } from "../contract/ThreadItem.ts"
import type { UsageTotals } from "../contract/Usage.ts"
import { addUsage, UsageTotals as UsageTotalsSchema, zeroUsage } from "../contract/Usage.ts"
import type { ImportCursor, ImportIdentity, ImportMapper, MapStep } from "./ImportCursor.ts"
import { finishingOf, ImportCursor as ImportCursorSchema, initialCursor } from "./ImportCursor.ts"
import { isLegacyCodexHeader } from "./internal/codexLegacy.ts"
import { arr, counter, exitCodeOf, field, isRecord, num, obj, parseJsonValue, str } from "./internal/foreignJson.ts"
import { closeTurn, failTurn, itemEvent, nextItemId, openTurn, seen, startThread } from "./internal/importTurns.ts"
import { applyPatchDiff, diffFields, labelVerification } from "./internal/toolEvidence.ts"

const PendingCall = Schema.Struct({
  itemId: Schema.String,
  kind: Schema.Literals(["shell", "tool", "patch"]),
  name: Schema.String,
  command: Schema.String,
  input: Schema.String
})

type PendingCall = typeof PendingCall.Type

/** The reducer state of a Codex rollout import (persisted between incremental imports). */
export const CodexRolloutState = Schema.Struct({
  cursor: ImportCursorSchema,
  metaSeen: Schema.Boolean,
  nextTurnId: Schema.String,
  total: UsageTotalsSchema,
  pending: Schema.Record(Schema.String, PendingCall),
  /** A legacy rollout (a bare `{id, timestamp, instructions}` header, then bare response items). */
  legacy: Schema.optionalKey(Schema.Boolean),
  /**
   * Which record kind carries the prompts (`user_message` until 0.146, `item_completed`
   * `UserMessage` from 0.147) and which the assistant texts (`response_item` or `item_completed`
   * `AgentMessage`): the first seen wins, so a version writing both counts each once.
   */
  promptsVia: Schema.optionalKey(Schema.String),
  textsVia: Schema.optionalKey(Schema.String)
})

/** The reducer state of a Codex rollout import. */
export type CodexRolloutState = typeof CodexRolloutState.Type

/** The session id of a Codex thread. */
export const codexSessionId = (threadId: string): string => `codex-${threadId}`

/**
 * The identity a rollout's first `session_meta` gives: `codex-<id>`, and for a forked or
 * subagent thread the parent `codex-<parent id>`. Undefined for any other record.
 */
export const codexRolloutIdentity = (record: unknown): ImportIdentity | undefined => {
  if (isLegacyCodexHeader(record)) {
    const id = str(record, "id") ?? ""
    return { sessionId: codexSessionId(id), threadId: id }
  }
  if (str(record, "type") !== "session_meta") return undefined
  const payload = obj(record, "payload")
  const id = str(payload, "id")
  if (id === undefined || id.length === 0) return undefined
  const spawn = obj(obj(obj(payload, "source"), "subagent"), "thread_spawn")
  const parent = str(payload, "forked_from_id") ?? str(payload, "parent_thread_id") ?? str(spawn, "parent_thread_id")
  return {
    sessionId: codexSessionId(id),
    threadId: id,
    ...(parent === undefined || parent.length === 0 ? {} : { parentSessionId: codexSessionId(parent) })
  }
}

export { isLegacyCodexHeader } from "./internal/codexLegacy.ts"

/** The response item types a legacy rollout writes bare (no envelope). */
const LEGACY_ITEMS: ReadonlySet<string> = new Set([
  "message",
  "reasoning",
  "function_call",
  "function_call_output",
  "custom_tool_call",
  "custom_tool_call_output",
  "local_shell_call",
  "web_search_call"
])

/** Injected context a legacy rollout writes as user messages (the prompt is the other user text). */
const INJECTED = /^\s*(<environment_context>|<user_instructions>|<permissions instructions>|# AGENTS\.md)/u

/** Function-call names that run a shell command. */
export const CODEX_SHELL_TOOLS: ReadonlySet<string> = new Set([
  "shell",
  "exec_command",
  "shell_command",
  "container.exec",
  "local_shell"
])

const quoteArg = (arg: string): string =>
  /^[A-Za-z0-9_./:=@%+,-]+$/u.test(arg) ? arg : `'${arg.replace(/'/gu, `'\\''`)}'`

/**
 * A shell command as one string: `[bash|zsh|sh, -lc|-c, script]` is the script, any other argv
 * array is joined (quoted where needed), a string is kept.
 */
export const commandText = (value: unknown): string | undefined => {
  if (typeof value === "string") return value
  if (Array.isArray(value) && value.every((part) => typeof part === "string")) {
    const [shell, flag, script] = value
    if (
      value.length === 3 && script !== undefined && /^(?:\/\S*\/)?(?:bash|zsh|sh)$/u.test(shell ?? "") &&
      (flag === "-lc" || flag === "-c")
    ) return script
    return value.map((part: string) => quoteArg(part)).join(" ")
  }
  return undefined
}

/** The shell command of a function call's arguments (`command` argv/string or `cmd`). */
const shellCommandOf = (args: unknown): string | undefined =>
  commandText(field(args, "command")) ??
    str(args, "cmd")

/** Output text and exit code of a function call output (0.40 JSON wrapper or later plain text). */
export const parseCallOutput = (output: unknown): { readonly text: string; readonly exitCode: number | undefined } => {
  if (typeof output !== "string") {
    const content = str(output, "content")
    return { text: content ?? "", exitCode: undefined }
  }
  const wrapped = parseJsonValue(output)
  if (isRecord(wrapped) && typeof wrapped["output"] === "string") {
    return { text: wrapped["output"], exitCode: exitCodeOf(num(obj(wrapped, "metadata"), "exit_code")) }
  }
  const match = /^(?:Exit code: |Process exited with code )(-?\d+)/mu.exec(output)
  return { text: output, exitCode: match === null ? undefined : exitCodeOf(Number(match[1])) }
}

/** The files an `apply_patch` text touches, with their kinds. */
export const patchChanges = (patch: string): Array<FileUpdateChange> => {
  const changes: Array<FileUpdateChange> = []
  for (const line of patch.split("\n")) {
    const m = /^\*\*\* (Add|Update|Delete) File: (.+?)\s*$/u.exec(line)
    if (m === null) continue
    const kind = m[1] === "Add" ? "add" : m[1] === "Delete" ? "delete" : "update"
    changes.push({ path: m[2] ?? "", kind })
  }
  return changes
}

const usageOf = (u: unknown): UsageTotals => {
  // OpenAI's input_tokens include the cached ones; the contract keeps both counters as reported.
  return {
    input_tokens: counter(u, "input_tokens"),
    cached_input_tokens: counter(u, "cached_input_tokens"),
    cache_creation_tokens: 0,
    output_tokens: counter(u, "output_tokens")
  }
}

const minus = (a: UsageTotals, b: UsageTotals): UsageTotals => ({
  input_tokens: Math.max(0, a.input_tokens - b.input_tokens),
  cached_input_tokens: Math.max(0, a.cached_input_tokens - b.cached_input_tokens),
  cache_creation_tokens: 0,
  output_tokens: Math.max(0, a.output_tokens - b.output_tokens)
})

const textOf = (content: unknown, ...kinds: ReadonlyArray<string>): string => {
  if (!Array.isArray(content)) return ""
  const parts: Array<string> = []
  for (const part of content) {
    const text = str(part, "text")
    if (kinds.includes(str(part, "type") ?? "") && text !== undefined) parts.push(text)
  }
  return parts.join("\n")
}

const skip = (state: CodexRolloutState, reason: string): MapStep<CodexRolloutState> => ({
  state,
  events: [],
  skipped: reason
})

const withCursor = (
  state: CodexRolloutState,
  step: { cursor: ImportCursor; events: Array<ThreadEvent> }
): MapStep<CodexRolloutState> => ({ state: { ...state, cursor: step.cursor }, events: step.events })

/** One item of the current turn (thread started first if needed). */
const emitItem = (
  state: CodexRolloutState,
  build: (cursor: ImportCursor, id: string) => Array<ThreadEvent>,
  pending?: { callId: string; call: Omit<PendingCall, "itemId"> }
): MapStep<CodexRolloutState> => {
  const started = startThread(state.cursor)
  const numbered = nextItemId(started.cursor)
  const events = [...started.events, ...build(numbered.cursor, numbered.id)]
  const next: CodexRolloutState = pending === undefined
    ? { ...state, cursor: numbered.cursor }
    : {
      ...state,
      cursor: numbered.cursor,
      pending: { ...state.pending, [pending.callId]: { ...pending.call, itemId: numbered.id } }
    }
  return { state: next, events }
}

const withoutPending = (state: CodexRolloutState, callId: string): CodexRolloutState => {
  const pending = { ...state.pending }
  delete pending[callId]
  return { ...state, pending }
}

const onFunctionCall = (state: CodexRolloutState, payload: unknown, ts: string): MapStep<CodexRolloutState> => {
  const name = str(payload, "name") ?? "unknown"
  const callId = str(payload, "call_id") ?? ""
  const rawArgs = str(payload, "arguments") ?? ""
  const args = parseJsonValue(rawArgs)
  // A shell call whose arguments do not parse (redacted, truncated) keeps their text as the command.
  const command = CODEX_SHELL_TOOLS.has(name) ? shellCommandOf(args) ?? rawArgs : undefined
  if (command !== undefined) {
    return emitItem(
      state,
      (
        c,
        id
      ) => [
        labelVerification(itemEvent("item.started", c, id, ts, {
          type: "command_execution",
          command,
          aggregated_output: "",
          status: "in_progress"
        }))
      ],
      { callId, call: { kind: "shell", name, command, input: "" } }
    )
  }
  if (name === "apply_patch") {
    const input = typeof args === "object" && args !== null ? str(args, "input") ?? rawArgs : rawArgs
    return emitItem(state, () => [], { callId, call: { kind: "patch", name, command: "", input } })
  }
  return emitItem(
    state,
    (c, id) => [
      itemEvent("item.started", c, id, ts, {
        type: "tool_invocation",
        tool_name: name,
        ...(args === undefined ? (rawArgs.length > 0 ? { arguments: rawArgs } : {}) : { arguments: args }),
        ...(callId.length > 0 ? { tool_call_id: callId } : {}),
        status: "in_progress"
      })
    ],
    { callId, call: { kind: "tool", name, command: "", input: "" } }
  )
}

const onCallOutput = (state: CodexRolloutState, payload: unknown, ts: string): MapStep<CodexRolloutState> => {
  const callId = str(payload, "call_id") ?? ""
  const call = state.pending[callId]
  if (call === undefined) return skip(state, "output without a known call")
  const rest = withoutPending(state, callId)
  const { exitCode, text } = parseCallOutput(field(payload, "output"))
  const c = rest.cursor
  switch (call.kind) {
    case "shell":
      return {
        state: rest,
        events: [
          labelVerification(itemEvent("item.completed", c, call.itemId, ts, {
            type: "command_execution",
            command: call.command,
            aggregated_output: text,
            ...(exitCode === undefined ? {} : { exit_code: exitCode }),
            status: exitCode === undefined || exitCode === 0 ? "completed" : "failed"
          }))
        ]
      }
    case "patch": {
      const failed = /^(error|failed|apply_patch verification failed)/imu.test(text) || (exitCode ?? 0) !== 0
      return {
        state: rest,
        events: [
          itemEvent("item.completed", c, call.itemId, ts, {
            type: "file_change",
            changes: patchChanges(call.input),
            status: failed ? "failed" : "completed",
            // The patch body in unified-diff form: one header per file, its hunks as written.
            ...diffFields(applyPatchDiff(call.input))
          })
        ]
      }
    }
    case "tool": {
      const numbered = nextItemId(c)
      return {
        state: { ...rest, cursor: numbered.cursor },
        events: [
          itemEvent("item.completed", c, call.itemId, ts, {
            type: "tool_invocation",
            tool_name: call.name,
            ...(callId.length > 0 ? { tool_call_id: callId } : {}),
            status: "completed"
          }),
          itemEvent("item.completed", numbered.cursor, numbered.id, ts, {
            type: "tool_output",
            call_id: call.itemId,
            ...(callId.length > 0 ? { tool_call_id: callId } : {}),
            output: text,
            ...(exitCode === undefined ? {} : { exit_code: exitCode }),
            status: "completed"
          })
        ]
      }
    }
  }
}

const onResponseItem = (state: CodexRolloutState, payload: unknown, ts: string): MapStep<CodexRolloutState> => {
  const type = str(payload, "type")
  switch (type) {
    case "message": {
      if (state.legacy === true && str(payload, "role") === "user") {
        // A legacy rollout has no user_message event: the prompt is the user text that is not injected context.
        const prompt = textOf(arr(payload, "content"), "input_text", "text")
        if (prompt.trim().length === 0 || INJECTED.test(prompt)) {
          return skip(state, "message (user): injected context (legacy)")
        }
        const opened = openTurn(state.cursor, prompt, ts)
        return { state: { ...state, cursor: opened.cursor }, events: opened.events }
      }
      if (str(payload, "role") !== "assistant") {
        return skip(
          state,
          `response_item/message (${str(payload, "role") ?? "?"}): context, the prompt comes from user_message`
        )
      }
      if (state.textsVia === "item_completed") {
        return skip(state, "response_item/message: duplicates item_completed AgentMessage")
      }
      const text = textOf(arr(payload, "content"), "output_text", ...(state.legacy === true ? ["text"] : []))
      if (text.length === 0) return skip(state, "response_item/message: empty assistant message")
      return emitItem(
        { ...state, textsVia: "response_item" },
        (c, id) => [itemEvent("item.completed", c, id, ts, { type: "agent_message", text })]
      )
    }
    case "reasoning": {
      // Summaries (all versions); 0.139 may carry the raw reasoning as `content` reasoning_text parts.
      const text = textOf(arr(payload, "summary"), "summary_text") ||
        textOf(arr(payload, "content"), "reasoning_text")
      if (text.length === 0) return skip(state, "response_item/reasoning: no summary (encrypted only)")
      return emitItem(state, (c, id) => [itemEvent("item.completed", c, id, ts, { type: "reasoning", text })])
    }
    case "function_call":
      return onFunctionCall(state, payload, ts)
    case "custom_tool_call": {
      const name = str(payload, "name") ?? "unknown"
      const input = str(payload, "input") ?? ""
      return onFunctionCall(state, {
        ...(isRecord(payload) ? payload : {}),
        name,
        arguments: JSON.stringify({ input })
      }, ts)
    }
    case "function_call_output":
    case "custom_tool_call_output":
      return onCallOutput(state, payload, ts)
    case "web_search_call": {
      const action = obj(payload, "action")
      const query = str(action, "query") ?? str(action, "url") ?? str(action, "pattern") ?? ""
      return emitItem(state, (c, id) => [itemEvent("item.completed", c, id, ts, { type: "web_search", query })])
    }
    default:
      return skip(state, `response_item/${type ?? "?"}`)
  }
}

const onEventMsg = (state: CodexRolloutState, payload: unknown, ts: string): MapStep<CodexRolloutState> => {
  const type = str(payload, "type")
  switch (type) {
    case "user_message": {
      if (state.promptsVia === "item_completed") {
        return skip(state, "event_msg/user_message: duplicates item_completed UserMessage")
      }
      const message = str(payload, "message") ?? ""
      const opened = openTurn(state.cursor, message, ts, state.nextTurnId)
      return {
        state: { ...state, cursor: opened.cursor, nextTurnId: "", promptsVia: "user_message" },
        events: opened.events
      }
    }
    case "item_completed":
      return onItemCompleted(state, obj(payload, "item"), ts)
    case "task_started": {
      const turnId = str(payload, "turn_id") ?? ""
      return {
        state: { ...state, nextTurnId: turnId },
        events: [],
        skipped: "event_msg/task_started: turn id kept for the prompt"
      }
    }
    case "task_complete":
      return withCursor(state, closeTurn(state.cursor))
    case "turn_aborted":
      return withCursor(state, failTurn(state.cursor, `turn aborted: ${str(payload, "reason") ?? "unknown reason"}`))
    case "token_count": {
      const info = obj(payload, "info")
      const total = obj(info, "total_token_usage")
      if (total === undefined) return skip(state, "event_msg/token_count: no usage (rate limits only)")
      const now = usageOf(total)
      const delta = minus(now, state.total)
      const cursor = { ...state.cursor, usage: addUsage(state.cursor.usage, delta) }
      return { state: { ...state, total: now, cursor }, events: [] }
    }
    case "exec_command_end": {
      if (str(payload, "source") !== "user_shell") {
        return skip(state, "event_msg/exec_command_end: duplicates the call output")
      }
      const command = commandText(field(payload, "command")) ?? ""
      const exitCode = exitCodeOf(num(payload, "exit_code"))
      const output = str(payload, "aggregated_output") ?? str(payload, "stdout") ?? ""
      return emitItem(state, (c, id) => [
        labelVerification(itemEvent("item.completed", c, id, ts, {
          type: "command_execution",
          command,
          aggregated_output: output,
          ...(exitCode === undefined ? {} : { exit_code: exitCode }),
          status: exitCode === undefined || exitCode === 0 ? "completed" : "failed"
        }))
      ])
    }
    case "error": {
      const message = str(payload, "message") ?? "error"
      return emitItem(state, (c, id) => [itemEvent("item.completed", c, id, ts, { type: "error", message })])
    }
    case "agent_message":
    case "agent_reasoning":
    case "patch_apply_end":
    case "web_search_end":
    case "mcp_tool_call_end":
    case "context_compacted":
      return skip(state, `event_msg/${type}: duplicates a response_item`)
    default:
      return skip(state, `event_msg/${type ?? "?"}`)
  }
}

/**
 * Codex ≥ 0.147 `event_msg/item_completed`: a `UserMessage` is the prompt, an `AgentMessage` the
 * assistant text (each unless the older record kind already carries them, see `promptsVia`);
 * other items duplicate response items and are counted by their type.
 */
const onItemCompleted = (state: CodexRolloutState, item: unknown, ts: string): MapStep<CodexRolloutState> => {
  const kind = str(item, "type") ?? "?"
  const text = textOf(arr(item, "content"), "text", "Text", "input_text", "output_text")
  if (kind === "UserMessage") {
    if (state.promptsVia === "user_message") return skip(state, "item_completed/UserMessage: duplicates user_message")
    const opened = openTurn(state.cursor, text, ts, state.nextTurnId)
    return {
      state: { ...state, cursor: opened.cursor, nextTurnId: "", promptsVia: "item_completed" },
      events: opened.events
    }
  }
  if (kind === "AgentMessage") {
    if (state.textsVia === "response_item") {
      return skip(state, "item_completed/AgentMessage: duplicates a response_item")
    }
    if (text.length === 0) return skip(state, "item_completed/AgentMessage: empty")
    return emitItem(
      { ...state, textsVia: "item_completed" },
      (c, id) => [itemEvent("item.completed", c, id, ts, { type: "agent_message", text })]
    )
  }
  return skip(state, `item_completed/${kind}: duplicates a response_item`)
}

const onCompacted = (state: CodexRolloutState, payload: unknown): MapStep<CodexRolloutState> => {
  const history = arr(payload, "replacement_history") ?? []
  const remote = history.some((item) => str(item, "type") === "compaction")
  const started = startThread(state.cursor)
  const event: ThreadEvent = {
    type: "thread.compact_boundary",
    thread_id: state.cursor.identity.threadId,
    trigger: "auto",
    mode: remote ? "provider" : "local",
    original_message_count: 0,
    compacted_message_count: history.length
  }
  return { state: { ...state, cursor: started.cursor }, events: [...started.events, event] }
}

/** Maps one parsed rollout record. */
export const stepCodexRollout = (state: CodexRolloutState, record: unknown): MapStep<CodexRolloutState> => {
  const ts = str(record, "timestamp") ?? ""
  const s = { ...state, cursor: seen(state.cursor, ts) }
  const type = str(record, "type")
  const payload = obj(record, "payload")
  if (isLegacyCodexHeader(record)) {
    if (s.metaSeen) return skip(s, "legacy header: repeated")
    return withCursor({ ...s, metaSeen: true, legacy: true }, startThread(s.cursor))
  }
  if (str(record, "record_type") === "state") return skip(s, "legacy state marker")
  if (s.legacy === true && type !== undefined && LEGACY_ITEMS.has(type) && payload === undefined) {
    return onResponseItem(s, record, ts)
  }
  switch (type) {
    case "session_meta": {
      if (s.metaSeen) return skip(s, "session_meta: repeated (a fork copies its parent's)")
      return withCursor({ ...s, metaSeen: true }, startThread(s.cursor))
    }
    case "response_item":
      return onResponseItem(s, payload, ts)
    case "event_msg":
      return onEventMsg(s, payload, ts)
    case "compacted":
      return onCompacted(s, payload)
    case "turn_context":
      return skip(s, "turn_context: settings (model, cwd, policies) have no place in the contract")
    default:
      return skip(s, `${type ?? "record without type"}`)
  }
}

/** The Codex rollout mapper. */
export const codexRolloutMapper: ImportMapper<CodexRolloutState> = {
  format: "codex",
  state: CodexRolloutState,
  identify: codexRolloutIdentity,
  version: (record) => str(obj(record, "payload"), "cli_version"),
  initial: (identity) => ({
    cursor: initialCursor(identity),
    metaSeen: false,
    nextTurnId: "",
    total: zeroUsage,
    pending: {}
  }),
  step: stepCodexRollout,
  openUsage: (state) => state.cursor.open ? state.cursor.usage : zeroUsage,
  ...finishingOf<CodexRolloutState>()
}
