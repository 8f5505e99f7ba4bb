/**
 * The canonical encoder for the append hot path. Each event and item type has a hand-written
 * builder of a plain object with the contract's keys in declaration order (absent optional
 * fields left `undefined`, which `JSON.stringify` omits), serialised by one `JSON.stringify`
 * call — instead of running the generic Schema encoder first. One native stringify also yields
 * a flat string, which the append buffer copies far faster than a concatenated one (bench P1).
 *
 * **Gotchas**: the output must stay byte-identical to
 * `JSON.stringify(Schema.encodeSync(VersionedThreadEvent)(envelope))` — historical lines are
 * never rewritten, so any drift would make the same event serialise two ways. A property
 * test over `Arbitrary.schema(ThreadEvent)` guards this; change the Schemas and these
 * builders together. Nested objects are always rebuilt (never passed through), so extra keys
 * or another key order on the input cannot leak into the bytes. The encoder trusts its input
 * to be a valid `ThreadEvent` (typed construction or a decode): it does not re-validate.
 * Untrusted values must go through `decodeEvent` first. One exception: a u64 count beyond
 * 2^53 − 1 (which a decode accepts, as VT Code does) cannot be written exactly, so the encoder
 * throws a `RangeError` naming the field instead of writing a different number; the log turns
 * that into `InvalidEvent`, and {@link encodeEventForDisplay} writes the nearest value.
 */
import { Result, Schema } from "effect"
import { lazy } from "../internal/lazy.ts"
import type { MatrixAttempt, MatrixCommandEvidence, MatrixTaskState } from "./MatrixSnapshot.ts"
import type { MatrixResources, MatrixTaskSpec } from "./MatrixSpec.ts"
import type { ExecutionContext, MatrixUpdatedEvent, ThreadEvent, TokenBreakdown, Usage } from "./ThreadEvent.ts"
import { EVENT_SCHEMA_VERSION, ThreadEvent as ThreadEventSchema } from "./ThreadEvent.ts"
import type { ItemContext, ThreadItem } from "./ThreadItem.ts"

/**
 * A u64 field, written only when `JSON.stringify` writes it exactly: a count read beyond
 * 2^53 − 1 is only the nearest double of what the log held, so writing it would change it.
 */
const count = (n: number, field: string): number => {
  if (Number.isSafeInteger(n)) return n
  throw new RangeError(`${field} is ${n}: counts beyond 2^53 - 1 (9007199254740991) cannot be written exactly`)
}

const optCount = (n: number | undefined, field: string): number | undefined =>
  n === undefined ? undefined : count(n, field)

// Optional opaque JSON: `null` is dropped like absence (see `omittedWhenAbsent`).
const optJson = (value: unknown): unknown => value === null ? undefined : value

const usageObject = (u: Usage) => ({
  input_tokens: count(u.input_tokens, "input_tokens"),
  cached_input_tokens: count(u.cached_input_tokens, "cached_input_tokens"),
  cache_creation_tokens: count(u.cache_creation_tokens, "cache_creation_tokens"),
  output_tokens: count(u.output_tokens, "output_tokens")
})

const optUsage = (u: Usage | undefined) => u === undefined ? undefined : usageObject(u)

const tokenBreakdownObject = (t: TokenBreakdown) => ({
  system_prompt_tokens: count(t.system_prompt_tokens, "system_prompt_tokens"),
  tool_schema_tokens: count(t.tool_schema_tokens, "tool_schema_tokens"),
  instruction_file_tokens: count(t.instruction_file_tokens, "instruction_file_tokens"),
  message_history_tokens: count(t.message_history_tokens, "message_history_tokens"),
  cache_read_tokens: count(t.cache_read_tokens, "cache_read_tokens"),
  cache_write_tokens: count(t.cache_write_tokens, "cache_write_tokens"),
  cache_miss_tokens: count(t.cache_miss_tokens, "cache_miss_tokens"),
  subagent_bootstrap_tokens: optCount(t.subagent_bootstrap_tokens, "subagent_bootstrap_tokens")
})

const executionContextObject = (c: ExecutionContext) => ({
  task_id: c.task_id,
  turn_id: c.turn_id,
  actor_id: c.actor_id,
  parent_actor_id: c.parent_actor_id,
  origin: c.origin,
  timestamp: c.timestamp,
  goal: c.goal
})

const itemContextObject = (c: ItemContext) => ({
  task_id: c.task_id,
  turn_id: c.turn_id,
  actor_id: c.actor_id,
  parent_actor_id: c.parent_actor_id,
  timestamp: c.timestamp,
  activity: c.activity
})

/** The canonical object of one item (`{context?, id, type, …fields}`), keys in wire order. */
const itemObject = (item: ThreadItem): object => {
  const context = item.context === undefined ? undefined : itemContextObject(item.context)
  switch (item.type) {
    case "agent_message":
    case "plan":
      return { context, id: item.id, type: item.type, text: item.text }
    case "reasoning":
      return { context, id: item.id, type: item.type, text: item.text, stage: item.stage }
    case "decision":
      return {
        context,
        id: item.id,
        type: item.type,
        summary: item.summary,
        rationale: item.rationale,
        alternatives: item.alternatives,
        evidence_ids: item.evidence_ids
      }
    case "command_execution":
      return {
        context,
        id: item.id,
        type: item.type,
        command: item.command,
        arguments: optJson(item.arguments),
        aggregated_output: item.aggregated_output,
        exit_code: item.exit_code,
        status: item.status
      }
    case "tool_invocation":
      return {
        context,
        id: item.id,
        type: item.type,
        tool_name: item.tool_name,
        arguments: optJson(item.arguments),
        tool_call_id: item.tool_call_id,
        status: item.status,
        outcome: item.outcome
      }
    case "tool_output":
      return {
        context,
        id: item.id,
        type: item.type,
        call_id: item.call_id,
        tool_call_id: item.tool_call_id,
        spool_path: item.spool_path,
        output: item.output,
        exit_code: item.exit_code,
        status: item.status
      }
    case "file_change":
      return {
        context,
        id: item.id,
        type: item.type,
        diff_incomplete: item.diff_incomplete,
        changes: item.changes.map((change) => ({ path: change.path, kind: change.kind })),
        status: item.status,
        unified_diff: item.unified_diff,
        additions: optCount(item.additions, "additions"),
        deletions: optCount(item.deletions, "deletions")
      }
    case "mcp_tool_call":
      return {
        context,
        id: item.id,
        type: item.type,
        tool_name: item.tool_name,
        arguments: optJson(item.arguments),
        result: item.result,
        status: item.status
      }
    case "web_search":
      return {
        context,
        id: item.id,
        type: item.type,
        query: item.query,
        provider: item.provider,
        results: item.results
      }
    case "harness":
      return {
        context,
        id: item.id,
        type: item.type,
        event: item.event,
        message: item.message,
        command: item.command,
        path: item.path,
        exit_code: item.exit_code,
        attempt: item.attempt,
        error_category: item.error_category,
        duration_ms: optCount(item.duration_ms, "duration_ms"),
        task_id: item.task_id,
        session_id: item.session_id,
        exec_session_id: item.exec_session_id,
        status: item.status,
        transcript_path: item.transcript_path,
        archive_path: item.archive_path
      }
    case "error":
      return { context, id: item.id, type: item.type, message: item.message }
  }
}

/** The canonical compact JSON of one item (`{context?, id, type, …fields}`). */
export const encodeItem = (item: ThreadItem): string => JSON.stringify(itemObject(item))

// Records keep their own key order (as the Schema's Record encoding does: integer-like keys
// first); copying through `Object.entries` also keeps an own `__proto__` key as data.
const resourcesObject = (resources: MatrixResources): Record<string, number> => {
  const out: Record<string, number> = {}
  for (const [name, quantity] of Object.entries(resources)) {
    Object.defineProperty(out, name, { value: quantity, enumerable: true, writable: true, configurable: true })
  }
  return out
}

const taskSpecObject = (t: MatrixTaskSpec) => ({
  id: t.id,
  instructions: t.instructions,
  dependencies: t.dependencies,
  workspace: t.workspace,
  access: t.access,
  checks: t.checks,
  resources: resourcesObject(t.resources),
  timeout_secs: t.timeout_secs,
  replay_safe: t.replay_safe,
  inputs: t.inputs
})

const evidenceObject = (e: MatrixCommandEvidence) => ({
  command: e.command,
  attempt_id: e.attempt_id,
  worker_id: e.worker_id,
  generation: e.generation,
  event_id: e.event_id,
  exit_code: e.exit_code,
  cancelled: e.cancelled
})

const attemptObject = (a: MatrixAttempt) => ({
  id: a.id,
  worker_id: a.worker_id,
  phase: a.phase,
  generation: a.generation,
  launch_requested: a.launch_requested,
  outcome: a.outcome,
  cleanup_confirmed: a.cleanup_confirmed,
  evidence: a.evidence.map(evidenceObject)
})

const taskStateObject = (t: MatrixTaskState) => ({
  id: t.id,
  status: t.status,
  attempts: t.attempts.map(attemptObject),
  automatic_retries: t.automatic_retries
})

const matrixUpdatedObject = (event: MatrixUpdatedEvent) => ({
  type: event.type,
  spec: {
    id: event.spec.id,
    tasks: event.spec.tasks.map(taskSpecObject),
    resources: resourcesObject(event.spec.resources)
  },
  lifecycle: event.lifecycle,
  tasks: event.tasks.map(taskStateObject),
  generation: event.generation,
  revision: event.revision
})

/** The canonical object of a bare event: `type` first, then the variant's fields in order. */
const eventObject = (event: ThreadEvent): object => {
  switch (event.type) {
    case "matrix.updated":
      return matrixUpdatedObject(event)
    case "thread.started":
      return { type: event.type, thread_id: event.thread_id }
    case "thread.completed":
      return {
        type: event.type,
        completed_at: event.completed_at,
        thread_id: event.thread_id,
        session_id: event.session_id,
        subtype: event.subtype,
        outcome_code: event.outcome_code,
        result: event.result,
        stop_reason: event.stop_reason,
        usage: usageObject(event.usage),
        total_cost_usd: event.total_cost_usd,
        num_turns: count(event.num_turns, "num_turns")
      }
    case "thread.compact_boundary":
      return {
        type: event.type,
        thread_id: event.thread_id,
        trigger: event.trigger,
        mode: event.mode,
        original_message_count: count(event.original_message_count, "original_message_count"),
        compacted_message_count: count(event.compacted_message_count, "compacted_message_count"),
        history_artifact_path: event.history_artifact_path,
        previous_segment_id: event.previous_segment_id,
        new_segment_id: event.new_segment_id,
        previous_prefix_hash: event.previous_prefix_hash,
        new_prefix_hash: event.new_prefix_hash,
        previous_catalog_hash: event.previous_catalog_hash,
        new_catalog_hash: event.new_catalog_hash
      }
    case "context.reset":
      return {
        type: event.type,
        thread_id: event.thread_id,
        turn_id: event.turn_id,
        trigger: event.trigger,
        plan_preserved: event.plan_preserved,
        previous_context_usage_percent: event.previous_context_usage_percent,
        tool_budget_reset: event.tool_budget_reset
      }
    case "turn.started":
      return {
        type: event.type,
        token_breakdown: event.token_breakdown === undefined ? undefined : tokenBreakdownObject(event.token_breakdown),
        context: event.context === undefined ? undefined : executionContextObject(event.context)
      }
    case "turn.completed": {
      const sessions = event.in_progress_exec_sessions
      return {
        type: event.type,
        completed_at: event.completed_at,
        usage: usageObject(event.usage),
        in_progress_exec_sessions: sessions === undefined || sessions.length === 0 ? undefined : sessions
      }
    }
    case "turn.failed":
      return {
        type: event.type,
        completed_at: event.completed_at,
        message: event.message,
        usage: optUsage(event.usage)
      }
    case "turn.blocked":
      return {
        type: event.type,
        completed_at: event.completed_at,
        message: event.message,
        last_tool: event.last_tool,
        blocked_streak: count(event.blocked_streak, "blocked_streak"),
        blocked_total: count(event.blocked_total, "blocked_total"),
        consecutive_cap: count(event.consecutive_cap, "consecutive_cap"),
        total_cap: count(event.total_cap, "total_cap"),
        recovery_active: event.recovery_active,
        usage: optUsage(event.usage)
      }
    case "item.started":
    case "item.updated":
    case "item.completed":
      return { type: event.type, item: itemObject(event.item) }
    case "permission.requested":
      return { type: event.type, tool_name: event.tool_name }
    case "permission.resolved":
      return {
        type: event.type,
        tool_name: event.tool_name,
        decision: event.decision,
        wait_ms: count(event.wait_ms, "wait_ms")
      }
    case "interjected":
      return {
        type: event.type,
        text: event.text,
        source: event.source,
        image_count: event.image_count,
        redirect_kind: event.redirect_kind
      }
    case "plan.delta":
      return {
        type: event.type,
        thread_id: event.thread_id,
        turn_id: event.turn_id,
        item_id: event.item_id,
        delta: event.delta
      }
    case "plan.approval.requested":
      return { type: event.type, thread_id: event.thread_id, turn_id: event.turn_id, plan_file: event.plan_file }
    case "plan.approval.resolved":
      return {
        type: event.type,
        thread_id: event.thread_id,
        turn_id: event.turn_id,
        decision: event.decision,
        automatic: event.automatic
      }
    case "error":
      return { type: event.type, message: event.message }
    case "unknown":
      // The wire object as the Schema builds it: the original type, then the preserved fields.
      return { type: event.original_type, ...event.fields }
  }
}

/**
 * The canonical compact JSON of a bare event: `type` first, then the variant's fields in
 * declaration order, optional fields omitted exactly as the contract says. An Unknown event
 * is written back with its original `type` and preserved fields.
 */
export const encodeEvent = (event: ThreadEvent): string => JSON.stringify(eventObject(event))

const encodeBySchema = lazy(() => Schema.encodeUnknownResult(ThreadEventSchema))

/**
 * {@link encodeEvent} for showing an event that was read from a log: when a count is beyond
 * 2^53 − 1 (a VT Code log may hold up to u64's maximum), the event is written anyway with the
 * nearest double of each such count, which is all JavaScript holds after parsing it. Never throws.
 *
 * **Gotchas**: not for appending; the output then differs from the line in the file.
 */
export const encodeEventForDisplay = (event: ThreadEvent): string => {
  const exact = Result.try(() => encodeEvent(event))
  if (Result.isSuccess(exact)) return exact.success
  const encoded = encodeBySchema()(event)
  return JSON.stringify(Result.isSuccess(encoded) ? encoded.success : event)
}

/**
 * The canonical envelope line for `event` with the current {@link EVENT_SCHEMA_VERSION},
 * without the trailing newline (the log appends `\n`).
 */
export const encodeLine = (event: ThreadEvent): string =>
  JSON.stringify({ schema_version: EVENT_SCHEMA_VERSION, event: eventObject(event) })
