/**
 * The canonical encoder for the append hot path. Each event and item type has a hand-written
 * encoder that concatenates the JSON text directly (JSON.stringify only for strings and
 * opaque JSON), instead of running the generic Schema encoder and then JSON.stringify.
 *
 * **Gotchas**: the output must stay byte-identical to
 * `JSON.stringify(Schema.encodeSync(VersionedThreadEvent)(envelope))` — historical lines are
 * never rewritten, so any drift would make the same event serialise two ways. A property
 * test over `Arbitrary.schema(ThreadEvent)` guards this; change the Schemas and these
 * encoders together. The encoder trusts its input to be a valid `ThreadEvent` (typed
 * construction or a decode): it does not re-validate. Untrusted values must go through
 * `decodeEvent` first.
 */
import type { MatrixAttempt, MatrixCommandEvidence, MatrixTaskState } from "./MatrixSnapshot.ts"
import type { MatrixResources, MatrixTaskSpec } from "./MatrixSpec.ts"
import type { ExecutionContext, MatrixUpdatedEvent, ThreadEvent, TokenBreakdown, Usage } from "./ThreadEvent.ts"
import { EVENT_SCHEMA_VERSION } from "./ThreadEvent.ts"
import type { ItemContext, ThreadItem } from "./ThreadItem.ts"

const str: (value: string) => string = JSON.stringify

// Same text as JSON.stringify for every number (non-finite values, which the Schemas
// reject, would become `null` there too).
const num = (value: number): string => Number.isFinite(value) ? `${value}` : "null"

const json = (value: unknown): string => JSON.stringify(value) ?? "null"

const optStr = (key: string, value: string | undefined): string => value === undefined ? "" : `,"${key}":${str(value)}`

const optNum = (key: string, value: number | undefined): string => value === undefined ? "" : `,"${key}":${num(value)}`

const optBool = (key: string, value: boolean | undefined): string => value === undefined ? "" : `,"${key}":${value}`

// Optional opaque JSON: `null` is dropped like absence (see `omittedWhenAbsent`).
const optJson = (key: string, value: unknown): string =>
  value === undefined || value === null ? "" : `,"${key}":${json(value)}`

const strArray = (values: ReadonlyArray<string>): string => {
  let out = ""
  for (const value of values) out += out.length === 0 ? str(value) : `,${str(value)}`
  return `[${out}]`
}

const encodeUsage = (u: Usage): string =>
  `{"input_tokens":${num(u.input_tokens)},"cached_input_tokens":${num(u.cached_input_tokens)},`
  + `"cache_creation_tokens":${num(u.cache_creation_tokens)},"output_tokens":${num(u.output_tokens)}}`

const encodeTokenBreakdown = (t: TokenBreakdown): string =>
  `{"system_prompt_tokens":${num(t.system_prompt_tokens)},"tool_schema_tokens":${num(t.tool_schema_tokens)},`
  + `"instruction_file_tokens":${num(t.instruction_file_tokens)},`
  + `"message_history_tokens":${num(t.message_history_tokens)},"cache_read_tokens":${num(t.cache_read_tokens)},`
  + `"cache_write_tokens":${num(t.cache_write_tokens)},"cache_miss_tokens":${num(t.cache_miss_tokens)}`
  + `${optNum("subagent_bootstrap_tokens", t.subagent_bootstrap_tokens)}}`

const encodeExecutionContext = (c: ExecutionContext): string =>
  `{"task_id":${str(c.task_id)},"turn_id":${str(c.turn_id)},"actor_id":${str(c.actor_id)}`
  + `${optStr("parent_actor_id", c.parent_actor_id)},"origin":${str(c.origin)},"timestamp":${str(c.timestamp)}`
  + `${optStr("goal", c.goal)}}`

const encodeItemContext = (c: ItemContext): string =>
  `{"task_id":${str(c.task_id)},"turn_id":${str(c.turn_id)},"actor_id":${str(c.actor_id)}`
  + `${optStr("parent_actor_id", c.parent_actor_id)},"timestamp":${str(c.timestamp)}`
  + `${optStr("activity", c.activity)}}`

const optUsage = (usage: Usage | undefined): string => usage === undefined ? "" : `,"usage":${encodeUsage(usage)}`

/** The canonical compact JSON of one item (`{context?, id, type, …fields}`). */
export const encodeItem = (item: ThreadItem): string => {
  const head = `{${item.context === undefined ? "" : `"context":${encodeItemContext(item.context)},`}"id":${
    str(item.id)
  },"type":`
  switch (item.type) {
    case "agent_message":
      return `${head}"agent_message","text":${str(item.text)}}`
    case "plan":
      return `${head}"plan","text":${str(item.text)}}`
    case "reasoning":
      return `${head}"reasoning","text":${str(item.text)}${optStr("stage", item.stage)}}`
    case "decision":
      return `${head}"decision","summary":${str(item.summary)},"rationale":${str(item.rationale)},`
        + `"alternatives":${strArray(item.alternatives)},"evidence_ids":${strArray(item.evidence_ids)}}`
    case "command_execution":
      return `${head}"command_execution","command":${str(item.command)}${optJson("arguments", item.arguments)}`
        + `,"aggregated_output":${str(item.aggregated_output)}${optNum("exit_code", item.exit_code)}`
        + `,"status":${str(item.status)}}`
    case "tool_invocation":
      return `${head}"tool_invocation","tool_name":${str(item.tool_name)}${optJson("arguments", item.arguments)}`
        + `${optStr("tool_call_id", item.tool_call_id)},"status":${str(item.status)}${optStr("outcome", item.outcome)}}`
    case "tool_output":
      return `${head}"tool_output","call_id":${str(item.call_id)}${optStr("tool_call_id", item.tool_call_id)}`
        + `${optStr("spool_path", item.spool_path)},"output":${str(item.output)}${optNum("exit_code", item.exit_code)}`
        + `,"status":${str(item.status)}}`
    case "file_change": {
      let changes = ""
      for (const change of item.changes) {
        changes += `${changes.length === 0 ? "" : ","}{"path":${str(change.path)},"kind":${str(change.kind)}}`
      }
      return `${head}"file_change"${optBool("diff_incomplete", item.diff_incomplete)},"changes":[${changes}]`
        + `,"status":${str(item.status)}${optStr("unified_diff", item.unified_diff)}`
        + `${optNum("additions", item.additions)}${optNum("deletions", item.deletions)}}`
    }
    case "mcp_tool_call":
      return `${head}"mcp_tool_call","tool_name":${str(item.tool_name)}${optJson("arguments", item.arguments)}`
        + `${optStr("result", item.result)}${optStr("status", item.status)}}`
    case "web_search":
      return `${head}"web_search","query":${str(item.query)}${optStr("provider", item.provider)}${
        item.results === undefined ? "" : `,"results":${strArray(item.results)}`
      }}`
    case "harness":
      return `${head}"harness","event":${str(item.event)}${optStr("message", item.message)}`
        + `${optStr("command", item.command)}${optStr("path", item.path)}${optNum("exit_code", item.exit_code)}`
        + `${optNum("attempt", item.attempt)}${optStr("error_category", item.error_category)}`
        + `${optNum("duration_ms", item.duration_ms)}${optStr("task_id", item.task_id)}`
        + `${optStr("session_id", item.session_id)}${optStr("exec_session_id", item.exec_session_id)}`
        + `${optStr("status", item.status)}${optStr("transcript_path", item.transcript_path)}`
        + `${optStr("archive_path", item.archive_path)}}`
    case "error":
      return `${head}"error","message":${str(item.message)}}`
  }
}

const nullableStr = (value: string | null): string => value === null ? "null" : str(value)

// Records keep their own key order (`Object.entries`, as the Schema's Record encoding does:
// integer-like keys first); `__proto__` is an own key after JSON.parse and is written like any other.
const encodeResources = (resources: MatrixResources): string => {
  let out = ""
  for (const [name, quantity] of Object.entries(resources)) {
    out += `${out.length === 0 ? "" : ","}${str(name)}:${num(quantity)}`
  }
  return `{${out}}`
}

const encodeTaskSpec = (t: MatrixTaskSpec): string =>
  `{"id":${str(t.id)},"instructions":${str(t.instructions)},"dependencies":${strArray(t.dependencies)},`
  + `"workspace":${str(t.workspace)},"access":${str(t.access)},"checks":${strArray(t.checks)},`
  + `"resources":${encodeResources(t.resources)},"timeout_secs":${num(t.timeout_secs)},`
  + `"replay_safe":${t.replay_safe},"inputs":${strArray(t.inputs)}}`

const encodeEvidence = (e: MatrixCommandEvidence): string =>
  `{"command":${str(e.command)},"attempt_id":${str(e.attempt_id)},"worker_id":${str(e.worker_id)},`
  + `"generation":${str(e.generation)},"event_id":${str(e.event_id)},`
  + `"exit_code":${e.exit_code === null ? "null" : num(e.exit_code)},"cancelled":${e.cancelled}}`

const encodeAttempt = (a: MatrixAttempt): string => {
  let evidence = ""
  for (const e of a.evidence) evidence += `${evidence.length === 0 ? "" : ","}${encodeEvidence(e)}`
  return `{"id":${str(a.id)},"worker_id":${str(a.worker_id)},"phase":${str(a.phase)},`
    + `"generation":${nullableStr(a.generation)},"launch_requested":${a.launch_requested},`
    + `"outcome":${nullableStr(a.outcome)},"cleanup_confirmed":${a.cleanup_confirmed},"evidence":[${evidence}]}`
}

const encodeTaskState = (t: MatrixTaskState): string => {
  let attempts = ""
  for (const a of t.attempts) attempts += `${attempts.length === 0 ? "" : ","}${encodeAttempt(a)}`
  return `{"id":${str(t.id)},"status":${str(t.status)},"attempts":[${attempts}],`
    + `"automatic_retries":${num(t.automatic_retries)}}`
}

const encodeMatrixUpdated = (event: MatrixUpdatedEvent): string => {
  let specTasks = ""
  for (const t of event.spec.tasks) specTasks += `${specTasks.length === 0 ? "" : ","}${encodeTaskSpec(t)}`
  let tasks = ""
  for (const t of event.tasks) tasks += `${tasks.length === 0 ? "" : ","}${encodeTaskState(t)}`
  return `{"type":"matrix.updated","spec":{"id":${str(event.spec.id)},"tasks":[${specTasks}],`
    + `"resources":${encodeResources(event.spec.resources)}},"lifecycle":${str(event.lifecycle)},`
    + `"tasks":[${tasks}],"generation":${nullableStr(event.generation)},"revision":${num(event.revision)}}`
}

/**
 * The canonical compact JSON of a bare event: `type` first, then the variant's fields in
 * declaration order, optional fields omitted exactly as the contract says. An Unknown event
 * is written back with its original `type` and preserved fields.
 */
export const encodeEvent = (event: ThreadEvent): string => {
  switch (event.type) {
    case "matrix.updated":
      return encodeMatrixUpdated(event)
    case "thread.started":
      return `{"type":"thread.started","thread_id":${str(event.thread_id)}}`
    case "thread.completed":
      return `{"type":"thread.completed"${optStr("completed_at", event.completed_at)},"thread_id":${
        str(event.thread_id)
      },"session_id":${str(event.session_id)},"subtype":${str(event.subtype)},"outcome_code":${
        str(event.outcome_code)
      }${optStr("result", event.result)}${optStr("stop_reason", event.stop_reason)},"usage":${
        encodeUsage(event.usage)
      }${optNum("total_cost_usd", event.total_cost_usd)},"num_turns":${num(event.num_turns)}}`
    case "thread.compact_boundary":
      return `{"type":"thread.compact_boundary","thread_id":${str(event.thread_id)},"trigger":${
        str(event.trigger)
      },"mode":${str(event.mode)},"original_message_count":${num(event.original_message_count)},`
        + `"compacted_message_count":${num(event.compacted_message_count)}`
        + `${optStr("history_artifact_path", event.history_artifact_path)}`
        + `${optStr("previous_segment_id", event.previous_segment_id)}${optStr("new_segment_id", event.new_segment_id)}`
        + `${optStr("previous_prefix_hash", event.previous_prefix_hash)}${
          optStr("new_prefix_hash", event.new_prefix_hash)
        }`
        + `${optStr("previous_catalog_hash", event.previous_catalog_hash)}${
          optStr("new_catalog_hash", event.new_catalog_hash)
        }}`
    case "context.reset":
      return `{"type":"context.reset","thread_id":${str(event.thread_id)},"turn_id":${str(event.turn_id)},"trigger":${
        str(event.trigger)
      },"plan_preserved":${event.plan_preserved},"previous_context_usage_percent":${
        num(event.previous_context_usage_percent)
      },"tool_budget_reset":${event.tool_budget_reset}}`
    case "turn.started":
      return `{"type":"turn.started"${
        event.token_breakdown === undefined ? "" : `,"token_breakdown":${encodeTokenBreakdown(event.token_breakdown)}`
      }${event.context === undefined ? "" : `,"context":${encodeExecutionContext(event.context)}`}}`
    case "turn.completed": {
      const sessions = event.in_progress_exec_sessions
      return `{"type":"turn.completed"${optStr("completed_at", event.completed_at)},"usage":${
        encodeUsage(event.usage)
      }${sessions === undefined || sessions.length === 0 ? "" : `,"in_progress_exec_sessions":${strArray(sessions)}`}}`
    }
    case "turn.failed":
      return `{"type":"turn.failed"${optStr("completed_at", event.completed_at)},"message":${str(event.message)}${
        optUsage(event.usage)
      }}`
    case "turn.blocked":
      return `{"type":"turn.blocked"${optStr("completed_at", event.completed_at)},"message":${str(event.message)}${
        optStr("last_tool", event.last_tool)
      },"blocked_streak":${num(event.blocked_streak)},"blocked_total":${num(event.blocked_total)},`
        + `"consecutive_cap":${num(event.consecutive_cap)},"total_cap":${num(event.total_cap)},`
        + `"recovery_active":${event.recovery_active}${optUsage(event.usage)}}`
    case "item.started":
      return `{"type":"item.started","item":${encodeItem(event.item)}}`
    case "item.updated":
      return `{"type":"item.updated","item":${encodeItem(event.item)}}`
    case "item.completed":
      return `{"type":"item.completed","item":${encodeItem(event.item)}}`
    case "permission.requested":
      return `{"type":"permission.requested","tool_name":${str(event.tool_name)}}`
    case "permission.resolved":
      return `{"type":"permission.resolved","tool_name":${str(event.tool_name)},"decision":${
        str(event.decision)
      },"wait_ms":${num(event.wait_ms)}}`
    case "interjected":
      return `{"type":"interjected"${optStr("text", event.text)},"source":${str(event.source)},"image_count":${
        num(event.image_count)
      },"redirect_kind":${str(event.redirect_kind)}}`
    case "plan.delta":
      return `{"type":"plan.delta","thread_id":${str(event.thread_id)},"turn_id":${str(event.turn_id)},"item_id":${
        str(event.item_id)
      },"delta":${str(event.delta)}}`
    case "plan.approval.requested":
      return `{"type":"plan.approval.requested","thread_id":${str(event.thread_id)},"turn_id":${str(event.turn_id)}${
        optStr("plan_file", event.plan_file)
      }}`
    case "plan.approval.resolved":
      return `{"type":"plan.approval.resolved","thread_id":${str(event.thread_id)},"turn_id":${
        str(event.turn_id)
      },"decision":${str(event.decision)},"automatic":${event.automatic}}`
    case "error":
      return `{"type":"error","message":${str(event.message)}}`
    case "unknown":
      // Rare and off the hot path: build the wire object as the Schema does.
      return json({ type: event.original_type, ...event.fields })
  }
}

const LINE_PREFIX = `{"schema_version":${JSON.stringify(EVENT_SCHEMA_VERSION)},"event":`

/**
 * The canonical envelope line for `event` with the current {@link EVENT_SCHEMA_VERSION},
 * without the trailing newline (the log appends `\n`).
 */
export const encodeLine = (event: ThreadEvent): string => `${LINE_PREFIX}${encodeEvent(event)}}`
