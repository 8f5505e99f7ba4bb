/**
 * The pure mapping of `codex exec --json` output (one ThreadEvent-like object per line, no
 * timestamps) to ThreadEvents (docs/import.md#codex-exec---json): the shapes are close to the
 * contract, so the mapping mostly renames — item ids are made unique per turn, statuses the
 * contract does not have are dropped or mapped, and items it has no place for are counted.
 *
 * **Gotchas**: the output has no prompt text, so a turn is each `turn.started` and its
 * `context.goal` is absent. After `codex exec resume`, Codex 0.157 reports the thread's running
 * total in `turn.completed.usage`; it is recorded as reported.
 */
import { Schema } from "effect"
import type { ThreadEvent } from "../contract/ThreadEvent.ts"
import type { FileUpdateChange } from "../contract/ThreadItem.ts"
import { zeroUsage } from "../contract/Usage.ts"
import type { ImportIdentity, ImportMapper, MapStep } from "./ImportCursor.ts"
import { finishingOf, ImportCursor as ImportCursorSchema, initialCursor } from "./ImportCursor.ts"
import { arr, counter, exitCodeOf, field, isRecord, obj, str } from "./internal/foreignJson.ts"
import type { ItemBody } from "./internal/importTurns.ts"
import { closeTurn, failTurn, itemEvent, openTurn, startThread } from "./internal/importTurns.ts"
import { labelVerification } from "./internal/toolEvidence.ts"

/** The reducer state of a `codex exec --json` import. */
export const CodexExecState = Schema.Struct({ cursor: ImportCursorSchema })

/** The reducer state of a `codex exec --json` import. */
export type CodexExecState = typeof CodexExecState.Type

/** The identity `thread.started` gives: `codex-<thread id>` (the same thread as its rollout). */
export const codexExecIdentity = (record: unknown): ImportIdentity | undefined => {
  if (str(record, "type") !== "thread.started") return undefined
  const id = str(record, "thread_id")
  return id === undefined || id.length === 0 ? undefined : { sessionId: `codex-${id}`, threadId: id }
}

const isJson = Schema.is(Schema.Json)

const execStatus = (value: unknown): "completed" | "failed" | "in_progress" =>
  value === "failed" || value === "declined" ? "failed" : value === "in_progress" ? "in_progress" : "completed"

const changesOf = (value: unknown): Array<FileUpdateChange> =>
  (Array.isArray(value) ? value : []).flatMap((change) => {
    const path = str(change, "path")
    const kind = str(change, "kind")
    return path !== undefined && (kind === "add" || kind === "delete" || kind === "update") ? [{ path, kind }] : []
  })

const resultText = (result: unknown): string | undefined => {
  if (result === undefined || result === null) return undefined
  const content = arr(result, "content")
  if (content !== undefined) {
    return content.map((part) => str(part, "text") ?? JSON.stringify(part)).join("\n")
  }
  return typeof result === "string" ? result : JSON.stringify(result)
}

/** The contract body of one exec item, or the reason it has none. */
const bodyOf = (item: unknown): ItemBody | string => {
  const type = str(item, "type") ?? "?"
  switch (type) {
    case "agent_message":
      return { type: "agent_message", text: str(item, "text") ?? "" }
    case "reasoning":
      return { type: "reasoning", text: str(item, "text") ?? "" }
    case "command_execution": {
      const exitCode = exitCodeOf(field(item, "exit_code"))
      return {
        type: "command_execution",
        command: str(item, "command") ?? "",
        aggregated_output: str(item, "aggregated_output") ?? "",
        ...(exitCode === undefined ? {} : { exit_code: exitCode }),
        status: execStatus(field(item, "status"))
      }
    }
    case "file_change": {
      const status = field(item, "status")
      if (status !== "completed" && status !== "failed") return "file_change: not finished yet"
      return { type: "file_change", changes: changesOf(field(item, "changes")), status }
    }
    case "web_search":
      return { type: "web_search", query: str(item, "query") ?? str(obj(item, "action"), "query") ?? "" }
    case "mcp_tool_call": {
      const args = field(item, "arguments")
      const error = str(obj(item, "error"), "message") ?? str(item, "error")
      const result = error ?? resultText(field(item, "result"))
      const status = field(item, "status")
      return {
        type: "mcp_tool_call",
        tool_name: `${str(item, "server") ?? "mcp"}/${str(item, "tool") ?? "?"}`,
        ...(isJson(args) ? { arguments: args } : {}),
        ...(result === undefined ? {} : { result }),
        status: status === "failed" ? "failed" : status === "completed" ? "completed" : "started"
      }
    }
    case "todo_list": {
      const items = arr(item, "items") ?? []
      const text = items.map((t) => `- [${field(t, "completed") === true ? "x" : " "}] ${str(t, "text") ?? ""}`)
        .join("\n")
      return { type: "plan", text }
    }
    case "error":
      return { type: "error", message: str(item, "message") ?? "error" }
    default:
      return `item ${type}`
  }
}

const skip = (state: CodexExecState, reason: string): MapStep<CodexExecState> => ({
  state,
  events: [],
  skipped: reason
})

/** Maps one parsed `codex exec --json` line. */
export const stepCodexExec = (state: CodexExecState, record: unknown): MapStep<CodexExecState> => {
  const type = str(record, "type")
  const c = state.cursor
  switch (type) {
    case "thread.started": {
      if (c.started) return skip(state, "thread.started: repeated (exec resume)")
      const started = startThread(c)
      return { state: { cursor: started.cursor }, events: started.events }
    }
    case "turn.started": {
      const opened = openTurn(c, undefined, "")
      return { state: { cursor: opened.cursor }, events: opened.events }
    }
    case "turn.completed": {
      const usage = obj(record, "usage")
      const closed = closeTurn({
        ...c,
        usage: {
          input_tokens: counter(usage, "input_tokens"),
          cached_input_tokens: counter(usage, "cached_input_tokens"),
          cache_creation_tokens: counter(usage, "cache_write_input_tokens"),
          output_tokens: counter(usage, "output_tokens")
        }
      })
      return closed.events.length === 0
        ? skip(state, "turn.completed: no open turn")
        : { state: { cursor: closed.cursor }, events: closed.events }
    }
    case "turn.failed": {
      const failed = failTurn(c, str(obj(record, "error"), "message") ?? "turn failed")
      return failed.events.length === 0
        ? skip(state, "turn.failed: no open turn")
        : { state: { cursor: failed.cursor }, events: failed.events }
    }
    case "error": {
      const started = startThread(c)
      const event: ThreadEvent = { type: "error", message: str(record, "message") ?? "error" }
      return { state: { cursor: started.cursor }, events: [...started.events, event] }
    }
    case "item.started":
    case "item.updated":
    case "item.completed": {
      const item = obj(record, "item")
      if (!isRecord(item)) return skip(state, `${type}: no item`)
      const body = bodyOf(item)
      if (typeof body === "string") return skip(state, body)
      const started = startThread(c)
      const id = `${started.cursor.turnId.length > 0 ? started.cursor.turnId : "turn-0"}-${str(item, "id") ?? "item"}`
      return {
        state: { cursor: started.cursor },
        events: [...started.events, labelVerification(itemEvent(type, started.cursor, id, "", body))]
      }
    }
    default:
      return skip(state, type ?? "line without type")
  }
}

/** The `codex exec --json` mapper. */
export const codexExecMapper: ImportMapper<CodexExecState> = {
  format: "exec",
  state: CodexExecState,
  identify: codexExecIdentity,
  initial: (identity) => ({ cursor: initialCursor(identity) }),
  step: stepCodexExec,
  openUsage: () => zeroUsage,
  ...finishingOf<CodexExecState>()
}
