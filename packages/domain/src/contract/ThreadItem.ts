/**
 * The item half of the ThreadEvent contract (docs/format.md#thread-event): what
 * `item.started` / `item.updated` / `item.completed` carry. On the wire an item is one flat
 * object `{context?, id, type, ...fields}`; here each item type is one flat Struct in that
 * declaration order, so the Schema's encoding is the canonical byte form. Unknown item types
 * are NOT tolerated (the reference fails full decoding of such an event).
 */
import { Schema } from "effect"
import { defaulted, I32, omittedWhenAbsent, U32, U64 } from "./internal/eventFields.ts"

/** How a recorded shell command was classified by the host (`ItemContext.activity`). */
export const CommandActivity = Schema.Literals(["inspection", "verification", "mutation"])

/** How a recorded shell command was classified by the host. */
export type CommandActivity = typeof CommandActivity.Type

/** Item identity and timing (schema 0.17.0+); `timestamp` feeds turn-index timestamps. */
export const ItemContext = Schema.Struct({
  task_id: Schema.String,
  turn_id: Schema.String,
  actor_id: Schema.String,
  parent_actor_id: omittedWhenAbsent(Schema.String),
  timestamp: Schema.String,
  activity: omittedWhenAbsent(CommandActivity)
})

/** Item identity and timing recorded by the host. */
export type ItemContext = typeof ItemContext.Type

const context = omittedWhenAbsent(ItemContext)

/** A message authored by the agent. */
export const AgentMessageItem = Schema.Struct({
  context,
  id: Schema.String,
  type: Schema.Literal("agent_message"),
  text: Schema.String
})

/** A message authored by the agent. */
export type AgentMessageItem = typeof AgentMessageItem.Type

/** Plan markdown authored in the planning workflow. */
export const PlanItem = Schema.Struct({
  context,
  id: Schema.String,
  type: Schema.Literal("plan"),
  text: Schema.String
})

/** Plan markdown authored in the planning workflow. */
export type PlanItem = typeof PlanItem.Type

/** Free-form reasoning text; `stage` is open-ended (`analysis`, `plan`, `verification`, `diagnosis`, …). */
export const ReasoningItem = Schema.Struct({
  context,
  id: Schema.String,
  type: Schema.Literal("reasoning"),
  text: Schema.String,
  stage: omittedWhenAbsent(Schema.String)
})

/** Free-form reasoning text. */
export type ReasoningItem = typeof ReasoningItem.Type

/** A consequential choice with its public rationale; the two lists default to `[]` and are always written. */
export const DecisionItem = Schema.Struct({
  context,
  id: Schema.String,
  type: Schema.Literal("decision"),
  summary: Schema.String,
  rationale: Schema.String,
  alternatives: defaulted(Schema.Array(Schema.String), []),
  evidence_ids: defaulted(Schema.Array(Schema.String), [])
})

/** A consequential choice with its public rationale. */
export type DecisionItem = typeof DecisionItem.Type

/** Lifecycle of a command execution, tool invocation or tool output. */
export const ExecutionStatus = Schema.Literals(["completed", "failed", "in_progress"])

/** Lifecycle of a command execution, tool invocation or tool output. */
export type ExecutionStatus = typeof ExecutionStatus.Type

/** One shell/PTY command; `aggregated_output` defaults to `""` and is always written. */
export const CommandExecutionItem = Schema.Struct({
  context,
  id: Schema.String,
  type: Schema.Literal("command_execution"),
  command: Schema.String,
  arguments: omittedWhenAbsent(Schema.Json),
  aggregated_output: defaulted(Schema.String, ""),
  exit_code: omittedWhenAbsent(I32),
  status: ExecutionStatus
})

/** One shell/PTY command. */
export type CommandExecutionItem = typeof CommandExecutionItem.Type

/** Why a tool invocation terminated (finer than `status`). */
export const ToolOutcome = Schema.Literals([
  "success",
  "error",
  "permission_rejected",
  "permission_cancelled",
  "followup",
  "hook_denied",
  "invalid_tool",
  "cancelled"
])

/** Why a tool invocation terminated. */
export type ToolOutcome = typeof ToolOutcome.Type

/** One tool call made by the agent. */
export const ToolInvocationItem = Schema.Struct({
  context,
  id: Schema.String,
  type: Schema.Literal("tool_invocation"),
  tool_name: Schema.String,
  arguments: omittedWhenAbsent(Schema.Json),
  tool_call_id: omittedWhenAbsent(Schema.String),
  status: ExecutionStatus,
  outcome: omittedWhenAbsent(ToolOutcome)
})

/** One tool call made by the agent. */
export type ToolInvocationItem = typeof ToolInvocationItem.Type

/** The output of a tool invocation (`call_id` is the invocation item's id); `output` defaults to `""`. */
export const ToolOutputItem = Schema.Struct({
  context,
  id: Schema.String,
  type: Schema.Literal("tool_output"),
  call_id: Schema.String,
  tool_call_id: omittedWhenAbsent(Schema.String),
  spool_path: omittedWhenAbsent(Schema.String),
  output: defaulted(Schema.String, ""),
  exit_code: omittedWhenAbsent(I32),
  status: ExecutionStatus
})

/** The output of a tool invocation. */
export type ToolOutputItem = typeof ToolOutputItem.Type

/** The kind of change applied to one file. */
export const PatchChangeKind = Schema.Literals(["add", "delete", "update"])

/** The kind of change applied to one file. */
export type PatchChangeKind = typeof PatchChangeKind.Type

/** One file touched by a change set. */
export const FileUpdateChange = Schema.Struct({
  path: Schema.String,
  kind: PatchChangeKind
})

/** One file touched by a change set. */
export type FileUpdateChange = typeof FileUpdateChange.Type

/** A change set applied to the workspace. */
export const FileChangeItem = Schema.Struct({
  context,
  id: Schema.String,
  type: Schema.Literal("file_change"),
  diff_incomplete: omittedWhenAbsent(Schema.Boolean),
  changes: Schema.Array(FileUpdateChange),
  status: Schema.Literals(["completed", "failed"]),
  unified_diff: omittedWhenAbsent(Schema.String),
  additions: omittedWhenAbsent(U64),
  deletions: omittedWhenAbsent(U64)
})

/** A change set applied to the workspace. */
export type FileChangeItem = typeof FileChangeItem.Type

/** Lifecycle of an MCP tool call (`McpToolCallItem.status`). */
export const McpToolCallStatus = Schema.Literals(["started", "completed", "failed"])

/** Lifecycle of an MCP tool call. */
export type McpToolCallStatus = typeof McpToolCallStatus.Type

/** One MCP tool call; `result` is the captured text payload. */
export const McpToolCallItem = Schema.Struct({
  context,
  id: Schema.String,
  type: Schema.Literal("mcp_tool_call"),
  tool_name: Schema.String,
  arguments: omittedWhenAbsent(Schema.Json),
  result: omittedWhenAbsent(Schema.String),
  status: omittedWhenAbsent(McpToolCallStatus)
})

/** One MCP tool call. */
export type McpToolCallItem = typeof McpToolCallItem.Type

/** One web search made through a registered provider. */
export const WebSearchItem = Schema.Struct({
  context,
  id: Schema.String,
  type: Schema.Literal("web_search"),
  query: Schema.String,
  provider: omittedWhenAbsent(Schema.String),
  results: omittedWhenAbsent(Schema.Array(Schema.String))
})

/** One web search. */
export type WebSearchItem = typeof WebSearchItem.Type

/** Harness lifecycle kinds; strict (a new kind needs a schema bump, so older readers reject it). */
export const HarnessEventKind = Schema.Literals([
  "planning_started",
  "planning_completed",
  "continuation_started",
  "continuation_skipped",
  "turn_blocked",
  "blocked_recovery_started",
  "blocked_recovery_finished",
  "blocked_handoff_written",
  "blocked_handoff_resolved",
  "evaluation_started",
  "evaluation_passed",
  "evaluation_failed",
  "revision_started",
  "escalation_triggered",
  "escalation_bypassed",
  "verification_started",
  "verification_passed",
  "verification_failed",
  "error_recovered",
  "tool_retry_attempted",
  "tool_latency_recorded",
  "snapshot_created",
  "snapshot_restored",
  "session_tool_limit_increased",
  "tool_loop_limit_increased",
  "background_subprocess_completed",
  "delegated_agent_status"
])

/** Harness lifecycle kinds. */
export type HarnessEventKind = typeof HarnessEventKind.Type

/** A harness-managed continuation, verification, retry or background-completion record. */
export const HarnessItem = Schema.Struct({
  context,
  id: Schema.String,
  type: Schema.Literal("harness"),
  event: HarnessEventKind,
  message: omittedWhenAbsent(Schema.String),
  command: omittedWhenAbsent(Schema.String),
  path: omittedWhenAbsent(Schema.String),
  exit_code: omittedWhenAbsent(I32),
  attempt: omittedWhenAbsent(U32),
  error_category: omittedWhenAbsent(Schema.String),
  duration_ms: omittedWhenAbsent(U64),
  task_id: omittedWhenAbsent(Schema.String),
  session_id: omittedWhenAbsent(Schema.String),
  exec_session_id: omittedWhenAbsent(Schema.String),
  status: omittedWhenAbsent(Schema.String),
  transcript_path: omittedWhenAbsent(Schema.String),
  archive_path: omittedWhenAbsent(Schema.String)
})

/** A harness-managed lifecycle record. */
export type HarnessItem = typeof HarnessItem.Type

/** A non-fatal error captured for auditing. */
export const ErrorItem = Schema.Struct({
  context,
  id: Schema.String,
  type: Schema.Literal("error"),
  message: Schema.String
})

/** A non-fatal error captured for auditing. */
export type ErrorItem = typeof ErrorItem.Type

const ITEM_SCHEMAS = [
  AgentMessageItem,
  PlanItem,
  ReasoningItem,
  DecisionItem,
  CommandExecutionItem,
  ToolInvocationItem,
  ToolOutputItem,
  FileChangeItem,
  McpToolCallItem,
  WebSearchItem,
  HarnessItem,
  ErrorItem
] as const

/** An item `type` string of the contract. */
export type ThreadItemType = typeof ITEM_SCHEMAS[number]["fields"]["type"]["literal"]

/** The item `type` strings of the contract, in declaration order. */
export const THREAD_ITEM_TYPES: ReadonlyArray<ThreadItemType> = ITEM_SCHEMAS.map((schema) => schema.fields.type.literal)

/**
 * Every item type of the contract, discriminated on `type`. Strict: an unrecognised item
 * `type` fails decoding, which makes the enclosing `item.*` event undecodable (scan still
 * counts it; reconstruction drops it, docs/log.md#classification).
 */
export const ThreadItem = Schema.Union(ITEM_SCHEMAS).annotate({
  expected: `an item whose "type" is one of ${THREAD_ITEM_TYPES.join(", ")}`
}).pipe(Schema.toTaggedUnion("type"))

/** One item snapshot carried by an `item.*` event. */
export type ThreadItem = typeof ThreadItem.Type
