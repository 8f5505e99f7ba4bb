/**
 * The ThreadEvent contract (docs/format.md#thread-event, schema `0.18.0`): one Schema per event type, the union
 * on `type` with a lossless Unknown catch-all, the versioned envelope written as one line of
 * `events.jsonl`, and total decoders that return `SchemaError` values instead of throwing.
 *
 * Field order in every Struct is the spec's declaration order, so the Schema's encoding is
 * the canonical byte form (the fast encoder in `Encode.ts` is proven equal to it).
 */
import { Cause, Result, Schema, SchemaIssue, SchemaTransformation } from "effect"
import { decodeUtf8, isJsonObject, parseJsonText, trimWhitespace } from "../internal/jsonText.ts"
import {
  defaulted,
  NullTolerantCounter,
  omittedWhenAbsent,
  omittedWhenEmpty,
  tolerantLiterals,
  U32,
  U64,
  U8
} from "./internal/eventFields.ts"
import { MatrixSnapshot } from "./MatrixSnapshot.ts"
import { ThreadItem } from "./ThreadItem.ts"

/** The schema version written into every envelope this library appends. */
export const EVENT_SCHEMA_VERSION = "0.18.0"

/** Bound on `turn.completed.in_progress_exec_sessions` that writers keep (newest first); readers accept any length. */
export const MAX_IN_PROGRESS_EXEC_SESSIONS = 4

/** Token usage; every counter reads missing or `null` as 0 (V3 tolerance) and is always written. */
export const Usage = Schema.Struct({
  input_tokens: NullTolerantCounter,
  cached_input_tokens: NullTolerantCounter,
  cache_creation_tokens: NullTolerantCounter,
  output_tokens: NullTolerantCounter
})

/** Token usage of a turn or thread. */
export type Usage = typeof Usage.Type

/** Decomposition of the first-request prefix of a turn. */
export const TokenBreakdown = Schema.Struct({
  system_prompt_tokens: U64,
  tool_schema_tokens: U64,
  instruction_file_tokens: U64,
  message_history_tokens: U64,
  cache_read_tokens: U64,
  cache_write_tokens: U64,
  cache_miss_tokens: U64,
  subagent_bootstrap_tokens: omittedWhenAbsent(U64)
})

/** Decomposition of the first-request prefix of a turn. */
export type TokenBreakdown = typeof TokenBreakdown.Type

/** Where a turn's input came from. */
export const InputOrigin = Schema.Literals(["user", "correction", "plan_approval", "continuation", "retry"])

/** Where a turn's input came from. */
export type InputOrigin = typeof InputOrigin.Type

/** Task identity recorded on `turn.started` (schema 0.17.0+); `timestamp` feeds turn-index timestamps. */
export const ExecutionContext = Schema.Struct({
  task_id: Schema.String,
  turn_id: Schema.String,
  actor_id: Schema.String,
  parent_actor_id: omittedWhenAbsent(Schema.String),
  origin: InputOrigin,
  timestamp: Schema.String,
  goal: omittedWhenAbsent(Schema.String)
})

/** Task identity recorded on `turn.started`. */
export type ExecutionContext = typeof ExecutionContext.Type

/**
 * `matrix.updated` (docs/format.md#thread-event, docs/matrix.md#spec): a `MatrixSnapshot` carried verbatim, its fields
 * inline after `type` in the snapshot's order (`spec, lifecycle, tasks, generation,
 * revision`). Decoding checks the shape only; `Matrix.fromSnapshot` / `Matrix.replay` check
 * the orchestration invariants, so an event that decodes can still fail replay.
 */
export const MatrixUpdatedEvent = Schema.Struct({
  type: Schema.Literal("matrix.updated"),
  ...MatrixSnapshot.fields
})

/** A matrix checkpoint: the full snapshot after one successful mutation. */
export type MatrixUpdatedEvent = typeof MatrixUpdatedEvent.Type

/** A new execution thread started (lifecycle: `thread_started`). */
export const ThreadStartedEvent = Schema.Struct({
  type: Schema.Literal("thread.started"),
  thread_id: Schema.String
})

/** A new execution thread started. */
export type ThreadStartedEvent = typeof ThreadStartedEvent.Type

/** Coarse terminal category of a thread; other strings read as `unknown`. */
export const ThreadCompletionSubtype = tolerantLiterals([
  "success",
  "error_max_turns",
  "error_max_budget_usd",
  "error_during_execution",
  "cancelled"
])

/** Coarse terminal category of a thread. */
export type ThreadCompletionSubtype = typeof ThreadCompletionSubtype.Type

/**
 * The thread reached a terminal outcome (lifecycle: `thread_completed`).
 * **Gotchas**: `total_cost_usd` is re-encoded with JavaScript number formatting, so a
 * reference line holding an integral float such as `2.0` re-encodes as `2`.
 */
export const ThreadCompletedEvent = Schema.Struct({
  type: Schema.Literal("thread.completed"),
  completed_at: omittedWhenAbsent(Schema.String),
  thread_id: Schema.String,
  session_id: Schema.String,
  subtype: ThreadCompletionSubtype,
  outcome_code: Schema.String,
  result: omittedWhenAbsent(Schema.String),
  stop_reason: omittedWhenAbsent(Schema.String),
  usage: Usage,
  total_cost_usd: omittedWhenAbsent(Schema.Finite),
  num_turns: U64
})

/** The thread reached a terminal outcome. */
export type ThreadCompletedEvent = typeof ThreadCompletedEvent.Type

/** Conversation compaction replaced older history with a boundary. */
export const ThreadCompactBoundaryEvent = Schema.Struct({
  type: Schema.Literal("thread.compact_boundary"),
  thread_id: Schema.String,
  trigger: tolerantLiterals(["manual", "auto", "recovery", "model_switch"]),
  mode: tolerantLiterals(["provider", "local"]),
  original_message_count: U64,
  compacted_message_count: U64,
  history_artifact_path: omittedWhenAbsent(Schema.String),
  previous_segment_id: omittedWhenAbsent(Schema.String),
  new_segment_id: omittedWhenAbsent(Schema.String),
  previous_prefix_hash: omittedWhenAbsent(Schema.String),
  new_prefix_hash: omittedWhenAbsent(Schema.String),
  previous_catalog_hash: omittedWhenAbsent(Schema.String),
  new_catalog_hash: omittedWhenAbsent(Schema.String)
})

/** Conversation compaction replaced older history with a boundary. */
export type ThreadCompactBoundaryEvent = typeof ThreadCompactBoundaryEvent.Type

/** An approved plan handoff rebuilt a fresh execution context. */
export const ContextResetEvent = Schema.Struct({
  type: Schema.Literal("context.reset"),
  thread_id: Schema.String,
  turn_id: Schema.String,
  trigger: tolerantLiterals(["plan_approval"]),
  plan_preserved: Schema.Boolean,
  previous_context_usage_percent: U8,
  tool_budget_reset: Schema.Boolean
})

/** An approved plan handoff rebuilt a fresh execution context. */
export type ContextResetEvent = typeof ContextResetEvent.Type

/** A turn began (lifecycle: `turn_started`); `{"type":"turn.started"}` alone is valid. */
export const TurnStartedEvent = Schema.Struct({
  type: Schema.Literal("turn.started"),
  token_breakdown: omittedWhenAbsent(TokenBreakdown),
  context: omittedWhenAbsent(ExecutionContext)
})

/** A turn began. */
export type TurnStartedEvent = typeof TurnStartedEvent.Type

/**
 * A turn completed (lifecycle: `turn_completed`); `usage` is required.
 * `in_progress_exec_sessions` reads missing, `null` and `[]` as absent and is never written empty.
 */
export const TurnCompletedEvent = Schema.Struct({
  type: Schema.Literal("turn.completed"),
  completed_at: omittedWhenAbsent(Schema.String),
  usage: Usage,
  in_progress_exec_sessions: omittedWhenEmpty(Schema.String)
})

/** A turn completed. */
export type TurnCompletedEvent = typeof TurnCompletedEvent.Type

/** A turn failed (lifecycle: `turn_failed`); `message` is required. */
export const TurnFailedEvent = Schema.Struct({
  type: Schema.Literal("turn.failed"),
  completed_at: omittedWhenAbsent(Schema.String),
  message: Schema.String,
  usage: omittedWhenAbsent(Usage)
})

/** A turn failed. */
export type TurnFailedEvent = typeof TurnFailedEvent.Type

/** A turn was blocked by the tool-call fuse (emitted alongside `turn.failed`); counters default to 0. */
export const TurnBlockedEvent = Schema.Struct({
  type: Schema.Literal("turn.blocked"),
  completed_at: omittedWhenAbsent(Schema.String),
  message: Schema.String,
  last_tool: omittedWhenAbsent(Schema.String),
  blocked_streak: defaulted(U64, 0),
  blocked_total: defaulted(U64, 0),
  consecutive_cap: defaulted(U64, 0),
  total_cap: defaulted(U64, 0),
  recovery_active: defaulted(Schema.Boolean, false),
  usage: omittedWhenAbsent(Usage)
})

/** A turn was blocked by the tool-call fuse. */
export type TurnBlockedEvent = typeof TurnBlockedEvent.Type

/** An item began processing. */
export const ItemStartedEvent = Schema.Struct({ type: Schema.Literal("item.started"), item: ThreadItem })

/** An item began processing. */
export type ItemStartedEvent = typeof ItemStartedEvent.Type

/** An item was updated. */
export const ItemUpdatedEvent = Schema.Struct({ type: Schema.Literal("item.updated"), item: ThreadItem })

/** An item was updated. */
export type ItemUpdatedEvent = typeof ItemUpdatedEvent.Type

/** An item reached a terminal state. */
export const ItemCompletedEvent = Schema.Struct({ type: Schema.Literal("item.completed"), item: ThreadItem })

/** An item reached a terminal state. */
export type ItemCompletedEvent = typeof ItemCompletedEvent.Type

/** A tool needs the user's permission before it runs. */
export const PermissionRequestedEvent = Schema.Struct({
  type: Schema.Literal("permission.requested"),
  tool_name: Schema.String
})

/** A tool needs the user's permission before it runs. */
export type PermissionRequestedEvent = typeof PermissionRequestedEvent.Type

/** The user answered a permission prompt after `wait_ms` milliseconds. */
export const PermissionResolvedEvent = Schema.Struct({
  type: Schema.Literal("permission.resolved"),
  tool_name: Schema.String,
  decision: Schema.Literals(["allow", "deny", "cancelled", "followup"]),
  wait_ms: U64
})

/** The user answered a permission prompt. */
export type PermissionResolvedEvent = typeof PermissionResolvedEvent.Type

/** A mid-turn user interjection was merged into the running turn. */
export const InterjectedEvent = Schema.Struct({
  type: Schema.Literal("interjected"),
  text: omittedWhenAbsent(Schema.String),
  source: Schema.Literals(["direct", "queue"]),
  image_count: U32,
  redirect_kind: Schema.Literal("interjection")
})

/** A mid-turn user interjection was merged into the running turn. */
export type InterjectedEvent = typeof InterjectedEvent.Type

/** A streamed chunk of a plan item. */
export const PlanDeltaEvent = Schema.Struct({
  type: Schema.Literal("plan.delta"),
  thread_id: Schema.String,
  turn_id: Schema.String,
  item_id: Schema.String,
  delta: Schema.String
})

/** A streamed chunk of a plan item. */
export type PlanDeltaEvent = typeof PlanDeltaEvent.Type

/** A completed plan waits for an implementation decision. */
export const PlanApprovalRequestedEvent = Schema.Struct({
  type: Schema.Literal("plan.approval.requested"),
  thread_id: Schema.String,
  turn_id: Schema.String,
  plan_file: omittedWhenAbsent(Schema.String)
})

/** A completed plan waits for an implementation decision. */
export type PlanApprovalRequestedEvent = typeof PlanApprovalRequestedEvent.Type

/** The decision taken on a completed plan; other strings read as `unknown`. */
export const PlanApprovalDecision = tolerantLiterals([
  "execute",
  "auto_accept",
  "fresh_context",
  "revise",
  "cancel",
  "switch_build",
  "switch_auto"
])

/** The decision taken on a completed plan. */
export type PlanApprovalDecision = typeof PlanApprovalDecision.Type

/** The user or the active policy (`automatic`) decided on a completed plan. */
export const PlanApprovalResolvedEvent = Schema.Struct({
  type: Schema.Literal("plan.approval.resolved"),
  thread_id: Schema.String,
  turn_id: Schema.String,
  decision: PlanApprovalDecision,
  automatic: Schema.Boolean
})

/** The user or the active policy decided on a completed plan. */
export type PlanApprovalResolvedEvent = typeof PlanApprovalResolvedEvent.Type

/** A fatal thread error. */
export const ThreadErrorEvent = Schema.Struct({ type: Schema.Literal("error"), message: Schema.String })

/** A fatal thread error. */
export type ThreadErrorEvent = typeof ThreadErrorEvent.Type

const KNOWN_EVENT_SCHEMAS = [
  MatrixUpdatedEvent,
  ThreadStartedEvent,
  ThreadCompletedEvent,
  ThreadCompactBoundaryEvent,
  ContextResetEvent,
  TurnStartedEvent,
  TurnCompletedEvent,
  TurnFailedEvent,
  TurnBlockedEvent,
  ItemStartedEvent,
  ItemUpdatedEvent,
  ItemCompletedEvent,
  PermissionRequestedEvent,
  PermissionResolvedEvent,
  InterjectedEvent,
  PlanDeltaEvent,
  PlanApprovalRequestedEvent,
  PlanApprovalResolvedEvent,
  ThreadErrorEvent
] as const

/** A `type` string the contract defines (everything else decodes as {@link UnknownEvent}). */
export type KnownEventType = typeof KNOWN_EVENT_SCHEMAS[number]["fields"]["type"]["literal"]

/** The known event `type` strings, in the spec's declaration order. */
export const KNOWN_EVENT_TYPES: ReadonlyArray<KnownEventType> = KNOWN_EVENT_SCHEMAS.map((schema) =>
  schema.fields.type.literal
)

const knownEventTypes: ReadonlySet<string> = new Set(KNOWN_EVENT_TYPES)

/** Whether `type` is one of the contract's event types (a known type never decodes as Unknown). */
export const isKnownEventType = (type: string): type is KnownEventType => knownEventTypes.has(type)

const UnknownEventType = Schema.String.check(
  Schema.makeFilter((type) =>
    !knownEventTypes.has(type)
    || `Expected an event type outside the contract (a known type must match its own schema), got "${type}"`
  )
)

const UnknownEventFields = Schema.JsonObject.check(
  Schema.makeFilter((fields) => !Object.hasOwn(fields, "type") || "Expected no \"type\" key among the preserved fields")
)

const UnknownEventWire = Schema.StructWithRest(Schema.Struct({ type: UnknownEventType }), [
  Schema.Record(Schema.String, Schema.Json)
])

/**
 * The catch-all for event types this contract does not define (newer writers, foreign
 * tools). Unlike the reference, which drops the payload, it keeps the original `type` in
 * `original_type` and every other field as opaque JSON in `fields`, so re-encoding is
 * lossless. Its own discriminant is the literal `"unknown"` so narrowing on `type` stays exact.
 * **Gotchas**: re-encoding writes `type` first, then the fields in their JSON.parse order
 * (integer-like keys first, as JavaScript orders them), so a foreign line whose keys were in
 * another order re-encodes to the same JSON value but not necessarily the same bytes.
 */
export const UnknownEvent = UnknownEventWire.pipe(
  Schema.decodeTo(
    Schema.Struct({
      type: Schema.Literal("unknown"),
      original_type: UnknownEventType,
      fields: UnknownEventFields
    }),
    SchemaTransformation.transform({
      decode: ({ type, ...fields }) => ({ type: "unknown" as const, original_type: type, fields }),
      encode: ({ fields, original_type }) => ({ type: original_type, ...fields })
    })
  )
)

/** An event of a type this contract does not define, preserved losslessly. */
export type UnknownEvent = typeof UnknownEvent.Type

/**
 * Every event of the contract, discriminated on `type`, plus {@link UnknownEvent} for any
 * other string `type`. A known `type` with a bad payload is a decode failure, never Unknown;
 * a missing or non-string `type` is a failure too.
 */
export const ThreadEvent = Schema.Union([...KNOWN_EVENT_SCHEMAS, UnknownEvent]).annotate({
  expected: "an event object with a string \"type\""
}).pipe(Schema.toTaggedUnion("type"))

/** One event of the contract. */
export type ThreadEvent = typeof ThreadEvent.Type

/**
 * One line of `events.jsonl`: `{"schema_version": …, "event": …}`. Readers accept any
 * `schema_version` string (old lines keep the version they were written with).
 */
export const VersionedThreadEvent = Schema.Struct({
  schema_version: Schema.String,
  event: ThreadEvent
})

/** One line of `events.jsonl`. */
export type VersionedThreadEvent = typeof VersionedThreadEvent.Type

type Decoder<A> = (input: unknown) => Result.Result<A, Schema.SchemaError>

// Decoding dispatches on `type` to the one schema that can match (the union would try the
// variant and then Unknown): same outcome, one candidate, and errors that name only the
// variant's problem.
const EventHead = Schema.Struct({ type: Schema.String })
const EnvelopeHead = Schema.Struct({ schema_version: Schema.String, event: EventHead })
const decodeEventHead = Schema.decodeUnknownResult(EventHead)
const decodeEnvelopeHead = Schema.decodeUnknownResult(EnvelopeHead)

// Dispatch tables, built once in one expression and never written (not caches).
const eventDecoders: ReadonlyMap<string, Decoder<ThreadEvent>> = new Map(
  KNOWN_EVENT_SCHEMAS.map((schema) => [schema.fields.type.literal, Schema.decodeUnknownResult(schema)])
)
const envelopeDecoders: ReadonlyMap<string, Decoder<VersionedThreadEvent>> = new Map(
  KNOWN_EVENT_SCHEMAS.map((schema) => [
    schema.fields.type.literal,
    Schema.decodeUnknownResult(Schema.Struct({ schema_version: Schema.String, event: schema }))
  ])
)
const decodeUnknownEvent: Decoder<ThreadEvent> = Schema.decodeUnknownResult(UnknownEvent)
const decodeUnknownEnvelope: Decoder<VersionedThreadEvent> = Schema.decodeUnknownResult(
  Schema.Struct({ schema_version: Schema.String, event: UnknownEvent })
)

// Schema's Result adapter rethrows a defect raised while the input is being read — a throwing
// getter or proxy trap on a host value handed to `appendUnknown` — so the public decoders catch
// it and report the value as unreadable, keeping their never-throw contract.
const unreadable = (error: unknown): Schema.SchemaError => {
  const cause = error instanceof Error ? error.cause : undefined
  const defect = Cause.isCause(cause) ? Cause.squash(cause) : error
  const detail = defect instanceof Error ? defect.message : String(defect)
  return new Schema.SchemaError(new SchemaIssue.InvalidValue({ message: `Expected a readable value: ${detail}` }))
}

const total = <A>(decode: Decoder<A>): Decoder<A> => (input) =>
  Result.flatMap(Result.try({ try: () => decode(input), catch: unreadable }), (decoded) => decoded)

const decodeEventOrThrow: Decoder<ThreadEvent> = (input) =>
  Result.flatMap(decodeEventHead(input), (head) => (eventDecoders.get(head.type) ?? decodeUnknownEvent)(input))

const decodeEnvelopeOrThrow: Decoder<VersionedThreadEvent> = (input) =>
  Result.flatMap(
    decodeEnvelopeHead(input),
    (head) => (envelopeDecoders.get(head.event.type) ?? decodeUnknownEnvelope)(input)
  )

/**
 * Fully decodes a bare event value (already parsed JSON). Never throws: failures are
 * `SchemaError`s whose message names the offending path (e.g. `at ["usage"]["input_tokens"]`).
 */
export const decodeEvent: (input: unknown) => Result.Result<ThreadEvent, Schema.SchemaError> = total(
  decodeEventOrThrow
)

/** Fully decodes one envelope value (already parsed JSON). Never throws. */
export const decodeEnvelope: (input: unknown) => Result.Result<VersionedThreadEvent, Schema.SchemaError> = total(
  decodeEnvelopeOrThrow
)

/**
 * Parses and fully decodes the JSON text of one envelope line (with or without its trailing
 * newline). Invalid JSON is reported as a `SchemaError` too, with the parser's message.
 */
export const decodeLineText = (line: string): Result.Result<VersionedThreadEvent, Schema.SchemaError> =>
  Result.flatMap(parseJsonText(line), decodeEnvelope)

/** Why one line of host input holds no event (see {@link decodeInputLine}). */
export type InputLineProblem =
  | { readonly _tag: "NotUtf8" }
  | { readonly _tag: "NotJson"; readonly detail: string }
  | { readonly _tag: "NotObject" }
  | { readonly _tag: "Invalid"; readonly error: Schema.SchemaError }
  | { readonly _tag: "NoEventShape" }

/**
 * Decodes one line a host hands over (bytes, with or without its `\n`), read the way the log's
 * own lines are read: strict UTF-8, Rust `str::trim` whitespace, one JSON object. An object with
 * a `type` key is a bare event, one with `event` (and no `type`) an envelope whose event is
 * taken; a blank line is `undefined`. Never throws.
 */
export const decodeInputLine = (bytes: Uint8Array): Result.Result<ThreadEvent | undefined, InputLineProblem> => {
  const text = decodeUtf8(bytes)
  if (text === undefined) return Result.fail({ _tag: "NotUtf8" })
  const trimmed = trimWhitespace(text)
  if (trimmed.length === 0) return Result.succeed(undefined)
  const json = Result.try({
    try: (): unknown => JSON.parse(trimmed),
    catch: (error): InputLineProblem => ({
      _tag: "NotJson",
      detail: error instanceof Error ? error.message : String(error)
    })
  })
  if (Result.isFailure(json)) return Result.fail(json.failure)
  const value = json.success
  if (!isJsonObject(value)) return Result.fail({ _tag: "NotObject" })
  const invalid = (error: Schema.SchemaError): InputLineProblem => ({ _tag: "Invalid", error })
  if (Object.hasOwn(value, "type")) return Result.mapError(decodeEvent(value), invalid)
  if (Object.hasOwn(value, "event")) {
    return Result.mapBoth(decodeEnvelope(value), { onFailure: invalid, onSuccess: (envelope) => envelope.event })
  }
  return Result.fail({ _tag: "NoEventShape" })
}

/**
 * The timestamp the host recorded for an event, when it did: `turn.started` →
 * `context.timestamp`, `item.*` → `item.context.timestamp`. Used for turn-index `ts` so a
 * rescan reproduces the recorded times instead of "now" (docs/differences.md).
 */
export const eventTimestamp = (event: ThreadEvent): string | undefined => {
  switch (event.type) {
    case "turn.started":
      return event.context?.timestamp
    case "item.started":
    case "item.updated":
    case "item.completed":
      return event.item.context?.timestamp
    default:
      return undefined
  }
}
