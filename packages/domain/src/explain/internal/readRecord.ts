/**
 * The read phase of the explanation fold: every field the fold uses from one event, checked and
 * gathered into a {@link RecordFields} value before the fold changes anything. A record whose
 * used fields have the wrong shape reads as {@link Bad}, which the fold counts as malformed;
 * nothing else is decoded, so unused fields may hold anything.
 *
 * **Gotchas**: a field is read only where the fold reads it (e.g. `turn.completed` never checks
 * `message`, a harness record's `session_id` only when it has no `task_id`), so widening a read
 * here turns records that counted as valid into malformed ones. A `delegated_agent_status`
 * harness record reads its delegation fields after the fold has noted the record's agent (and
 * `exit_code` after it has recorded the delegation), so those reads are kept apart in
 * {@link Delegation} for the fold to apply in that order.
 */
import type { ExecutionStatus, McpToolCallStatus, ToolOutcome } from "../../contract/ThreadItem.ts"
import { isJsonObject } from "../../internal/jsonText.ts"
import type { Context, Json } from "./eventAccess.ts"
import {
  Bad,
  contextOf,
  EXEC_STATUS,
  FILE_CHANGE_STATUS,
  MCP_STATUS,
  oneOf,
  optInt,
  optObj,
  optOneOf,
  optStr,
  reqStr,
  str,
  TOOL_OUTCOMES,
  toolLabel
} from "./eventAccess.ts"

/** Which lifecycle event carried an item. */
export type ItemPhase = "started" | "updated" | "completed"

/**
 * The delegation fields of a `delegated_agent_status` harness record: the status text, the
 * child's name (`task_id`, else `session_id`, else the item id) and the exit code, which may
 * still be {@link Bad} (it is applied last).
 */
export interface Delegation {
  readonly status: string
  readonly child: string
  readonly exit: number | undefined | Bad
}

/** The fields of one item the fold uses, by item type; `ctx` is its context (legacy: `undefined`). */
export type ItemFields =
  | { readonly type: "agent_message" | "reasoning"; readonly id: string; readonly ctx: Context | undefined }
  | { readonly type: "plan"; readonly id: string; readonly ctx: Context | undefined; readonly text: string }
  | {
    readonly type: "decision"
    readonly id: string
    readonly ctx: Context | undefined
    readonly summary: string
    readonly rationale: string
    readonly alternatives: ReadonlyArray<unknown>
    readonly evidenceIds: ReadonlyArray<unknown>
  }
  | {
    readonly type: "command_execution"
    readonly id: string
    readonly ctx: Context | undefined
    readonly command: string
    readonly status: ExecutionStatus
    readonly exit: number | undefined
  }
  | {
    readonly type: "tool_invocation"
    readonly id: string
    readonly ctx: Context | undefined
    readonly name: string
    readonly label: string
    readonly status: ExecutionStatus
    readonly outcome: ToolOutcome | undefined
  }
  | {
    readonly type: "tool_output"
    readonly id: string
    readonly ctx: Context | undefined
    readonly callId: string
    readonly status: ExecutionStatus
    readonly exit: number | undefined
  }
  | {
    readonly type: "file_change"
    readonly id: string
    readonly ctx: Context | undefined
    readonly status: "completed" | "failed"
    readonly paths: ReadonlyArray<string>
    readonly diff: string | undefined
    readonly incomplete: boolean
  }
  | {
    readonly type: "mcp_tool_call"
    readonly id: string
    readonly ctx: Context | undefined
    readonly name: string
    readonly status: McpToolCallStatus | undefined
  }
  | { readonly type: "web_search"; readonly id: string; readonly ctx: Context | undefined; readonly query: string }
  | {
    readonly type: "harness"
    readonly id: string
    readonly ctx: Context | undefined
    /** `undefined` unless the event is `delegated_agent_status`; {@link Bad} when its status or child is bad. */
    readonly delegation: Delegation | undefined | Bad
  }
  | { readonly type: "error"; readonly id: string; readonly ctx: Context | undefined; readonly message: string }

/** The fields of one event the fold uses, by event type. */
export type RecordFields =
  | { readonly type: "turn.started"; readonly ctx: Context | undefined; readonly breakdown: Json | undefined }
  | {
    readonly type: "turn.ended"
    readonly status: "completed" | "failed" | "blocked"
    /** The failure's label and its `message` (checked only for a failure). */
    readonly failure: { readonly kind: "turn failed" | "turn blocked"; readonly message: string } | undefined
    readonly usage: Json | undefined
  }
  | { readonly type: "thread.completed"; readonly cost: number | undefined; readonly subtype: string | undefined }
  | { readonly type: "error"; readonly message: string }
  | { readonly type: "item"; readonly phase: ItemPhase; readonly item: ItemFields }
  | { readonly type: "interjected"; readonly text: string | undefined }
  | { readonly type: "plan.approval.requested"; readonly file: string | undefined }
  | { readonly type: "plan.approval.resolved"; readonly decision: string; readonly automatic: boolean }
  | { readonly type: "other"; readonly eventType: string }

const delegationOf = (item: Json, id: string): Delegation | Bad => {
  const status = optStr(item, "status")
  const taskId = optStr(item, "task_id")
  if (status === Bad || taskId === Bad) return Bad
  const sessionId = taskId === undefined ? optStr(item, "session_id") : undefined
  if (sessionId === Bad) return Bad
  return { status: status ?? "unknown", child: taskId ?? sessionId ?? id, exit: optInt(item, "exit_code") }
}

const fileChangeOf = (item: Json, id: string, ctx: Context | undefined): ItemFields | Bad => {
  const status = oneOf(item, "status", FILE_CHANGE_STATUS)
  const rawChanges = item.changes
  if (status === Bad || !Array.isArray(rawChanges)) return Bad
  const paths: Array<string> = []
  for (const c of rawChanges) {
    const path = isJsonObject(c) ? reqStr(c, "path") : Bad
    if (path === Bad) return Bad
    paths.push(path)
  }
  const diff = optStr(item, "unified_diff")
  if (diff === Bad) return Bad
  return { type: "file_change", id, ctx, status, paths, diff, incomplete: item.diff_incomplete === true }
}

/** Reads an item's fields; {@link Bad} when one it uses is wrong or the item type is unknown. */
const itemOf = (item: Json): ItemFields | Bad => {
  const id = reqStr(item, "id")
  const type = reqStr(item, "type")
  const ctx = contextOf(item, false)
  if (id === Bad || type === Bad || ctx === Bad) return Bad
  switch (type) {
    case "agent_message":
    case "reasoning":
      return reqStr(item, "text") === Bad ? Bad : { type, id, ctx }
    case "plan": {
      const text = reqStr(item, "text")
      return text === Bad ? Bad : { type, id, ctx, text }
    }
    case "decision": {
      const summary = reqStr(item, "summary")
      const rationale = reqStr(item, "rationale")
      if (summary === Bad || rationale === Bad) return Bad
      const alternatives = Array.isArray(item.alternatives) ? item.alternatives : []
      const evidenceIds = Array.isArray(item.evidence_ids) ? item.evidence_ids : []
      return { type, id, ctx, summary, rationale, alternatives, evidenceIds }
    }
    case "command_execution": {
      const command = reqStr(item, "command")
      const status = oneOf(item, "status", EXEC_STATUS)
      const exit = optInt(item, "exit_code")
      if (command === Bad || status === Bad || exit === Bad) return Bad
      return { type, id, ctx, command, status, exit }
    }
    case "tool_invocation": {
      const name = reqStr(item, "tool_name")
      const status = oneOf(item, "status", EXEC_STATUS)
      const outcome = optOneOf(item, "outcome", TOOL_OUTCOMES)
      if (name === Bad || status === Bad || outcome === Bad) return Bad
      return { type, id, ctx, name, label: toolLabel(name, item), status, outcome }
    }
    case "tool_output": {
      const callId = reqStr(item, "call_id")
      const status = oneOf(item, "status", EXEC_STATUS)
      const exit = optInt(item, "exit_code")
      if (callId === Bad || status === Bad || exit === Bad) return Bad
      return { type, id, ctx, callId, status, exit }
    }
    case "file_change":
      return fileChangeOf(item, id, ctx)
    case "mcp_tool_call": {
      const name = reqStr(item, "tool_name")
      const status = optOneOf(item, "status", MCP_STATUS)
      if (name === Bad || status === Bad) return Bad
      return { type, id, ctx, name, status }
    }
    case "web_search": {
      const query = reqStr(item, "query")
      return query === Bad ? Bad : { type, id, ctx, query }
    }
    case "harness": {
      const event = reqStr(item, "event")
      if (event === Bad) return Bad
      return { type, id, ctx, delegation: event === "delegated_agent_status" ? delegationOf(item, id) : undefined }
    }
    case "error": {
      const message = reqStr(item, "message")
      return message === Bad ? Bad : { type, id, ctx, message }
    }
    default:
      return Bad
  }
}

const turnEnd = (
  e: Json,
  status: "completed" | "failed" | "blocked",
  kind: "turn failed" | "turn blocked" | undefined
): RecordFields | Bad => {
  const usage = optObj(e, "usage")
  if (usage === Bad) return Bad
  if (kind === undefined) return { type: "turn.ended", status, failure: undefined, usage }
  if (reqStr(e, "message") === Bad) return Bad
  return { type: "turn.ended", status, failure: { kind, message: str(e, "message") ?? "" }, usage }
}

/** Reads every field the fold uses from one event; {@link Bad} when one has the wrong shape. */
export const readRecord = (e: Json): RecordFields | Bad => {
  const type = reqStr(e, "type")
  if (type === Bad) return Bad
  switch (type) {
    case "turn.started": {
      const ctx = contextOf(e, true)
      const breakdown = optObj(e, "token_breakdown")
      if (ctx === Bad || breakdown === Bad) return Bad
      return { type, ctx, breakdown }
    }
    case "turn.completed":
      return turnEnd(e, "completed", undefined)
    case "turn.failed":
      return turnEnd(e, "failed", "turn failed")
    case "turn.blocked":
      return turnEnd(e, "blocked", "turn blocked")
    case "thread.completed": {
      const cost = e.total_cost_usd
      return {
        type,
        cost: typeof cost === "number" && Number.isFinite(cost) ? cost : undefined,
        subtype: str(e, "subtype")
      }
    }
    case "error": {
      const message = reqStr(e, "message")
      return message === Bad ? Bad : { type, message }
    }
    case "item.started":
    case "item.updated":
    case "item.completed": {
      const raw = optObj(e, "item")
      const item = raw === undefined || raw === Bad ? Bad : itemOf(raw)
      if (item === Bad) return Bad
      return {
        type: "item",
        phase: type === "item.started" ? "started" : type === "item.updated" ? "updated" : "completed",
        item
      }
    }
    case "interjected": {
      const text = optStr(e, "text")
      return text === Bad ? Bad : { type, text }
    }
    case "plan.approval.requested": {
      const file = optStr(e, "plan_file")
      return file === Bad ? Bad : { type, file }
    }
    case "plan.approval.resolved": {
      const decision = reqStr(e, "decision")
      return decision === Bad ? Bad : { type, decision, automatic: e.automatic === true }
    }
    default:
      return { type: "other", eventType: type }
  }
}
