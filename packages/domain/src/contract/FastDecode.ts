/**
 * A fast decoder for the few event shapes whose text search indexes (docs/search.md#documents):
 * `error` events and `item.completed` of agent messages, plans, decisions, commands, file changes
 * and error items. It reads the fields of a plain `JSON.parse` value directly and checks each one
 * against the field rules of the Schema (`ThreadEvent.ts`, `ThreadItem.ts`); anything it is not
 * sure of — another type, a field of another kind, a number at the edge of a range, an array where
 * an object belongs — is left to the Schema by returning `undefined`. A property test checks that
 * whenever it returns an event, the Schema decodes the same value to an equal event.
 *
 * Decoding a gigabyte of history through the Schema costs most of an index build; these shapes
 * are the lines search reads, and the checks are a few `typeof` tests.
 *
 * **Gotchas**: the input must be what the scan's classifier parsed (not nested deeper than
 * `MAX_JSON_DEPTH`: the caller checks that, as full decoding does). Only numbers that a plain
 * `JSON.parse` and the exact parse (`parseJsonExact`) could read differently — 2^64 — are refused.
 */
import type { Schema } from "effect"
import type { ExecutionContext, ThreadEvent, VersionedThreadEvent } from "./ThreadEvent.ts"
import type { Usage } from "./ThreadEvent.ts"
import type { ExecutionStatus, FileUpdateChange, ItemContext, PatchChangeKind, ThreadItem } from "./ThreadItem.ts"

type Obj = { readonly [key: string]: unknown }

// A plain JSON object: what a Struct accepts (arrays are left to the Schema).
const isObj = (u: unknown): u is Obj => typeof u === "object" && u !== null && !Array.isArray(u)

// `undefined` means "ask the Schema"; FAIL marks a value the fast path refuses.
const FAIL: unique symbol = Symbol("FastDecode.fail")
type Fail = typeof FAIL

// omittedWhenAbsent: a missing key or `null` is absent, anything else must pass `check`.
const optional = <A>(u: unknown, check: (u: unknown) => A | Fail): A | undefined | Fail =>
  u === undefined || u === null ? undefined : check(u)

const str = (u: unknown): string | Fail => typeof u === "string" ? u : FAIL
const bool = (u: unknown): boolean | Fail => typeof u === "boolean" ? u : FAIL
const i32 = (u: unknown): number | Fail =>
  typeof u === "number" && Number.isInteger(u) && u >= -2147483648 && u <= 2147483647 ? u : FAIL
// u64 up to 2^53 − 1 only: larger counts are where the exact parse may differ.
const u64 = (u: unknown): number | Fail => typeof u === "number" && Number.isSafeInteger(u) && u >= 0 ? u : FAIL
const strings = (u: unknown): ReadonlyArray<string> | Fail =>
  Array.isArray(u) && u.every((s) => typeof s === "string") ? u : FAIL

const ACTIVITIES: ReadonlySet<string> = new Set(["inspection", "verification", "mutation"])
const STATUSES: ReadonlySet<string> = new Set(["completed", "failed", "in_progress"])
const KINDS: ReadonlySet<string> = new Set(["add", "delete", "update"])

const isStatus = (u: unknown): u is ExecutionStatus => typeof u === "string" && STATUSES.has(u)
const isKind = (u: unknown): u is PatchChangeKind => typeof u === "string" && KINDS.has(u)
const isActivity = (u: unknown): u is "inspection" | "verification" | "mutation" =>
  typeof u === "string" && ACTIVITIES.has(u)

// Schema.Json over a parsed value: finite numbers (2^64 refused, see above), strings, booleans,
// null, arrays and plain objects of those.
const isJson = (u: unknown): u is Schema.Json => {
  if (u === null || typeof u === "string" || typeof u === "boolean") return true
  if (typeof u === "number") return Number.isFinite(u) && Math.abs(u) < 2 ** 63
  if (Array.isArray(u)) return u.every(isJson)
  if (typeof u === "object") return Object.values(u).every(isJson)
  return false
}

const itemContext = (u: unknown): ItemContext | Fail => {
  if (!isObj(u)) return FAIL
  const { actor_id, parent_actor_id, task_id, timestamp, turn_id } = u
  if (typeof task_id !== "string" || typeof turn_id !== "string" || typeof actor_id !== "string") return FAIL
  if (typeof timestamp !== "string") return FAIL
  const parent = optional(parent_actor_id, str)
  const activity = optional(u.activity, (a) => isActivity(a) ? a : FAIL)
  if (parent === FAIL || activity === FAIL) return FAIL
  return {
    task_id,
    turn_id,
    actor_id,
    ...(parent === undefined ? {} : { parent_actor_id: parent }),
    timestamp,
    ...(activity === undefined ? {} : { activity })
  }
}

const change = (u: unknown): FileUpdateChange | Fail =>
  isObj(u) && typeof u.path === "string" && isKind(u.kind) ? { path: u.path, kind: u.kind } : FAIL

const itemOf = (u: Obj): ThreadItem | undefined => {
  const { id, type } = u
  if (typeof id !== "string") return undefined
  const context = optional(u.context, itemContext)
  if (context === FAIL) return undefined
  const head = context === undefined ? { id } : { context, id }
  switch (type) {
    case "agent_message":
    case "plan":
      return typeof u.text === "string" ? { ...head, type, text: u.text } : undefined
    case "error":
      return typeof u.message === "string" ? { ...head, type, message: u.message } : undefined
    case "decision": {
      const { rationale, summary } = u
      if (typeof summary !== "string" || typeof rationale !== "string") return undefined
      const alternatives = u.alternatives === undefined ? [] : strings(u.alternatives)
      const evidence = u.evidence_ids === undefined ? [] : strings(u.evidence_ids)
      if (alternatives === FAIL || evidence === FAIL) return undefined
      return { ...head, type, summary, rationale, alternatives, evidence_ids: evidence }
    }
    case "command_execution": {
      const { command, status } = u
      if (typeof command !== "string" || !isStatus(status)) return undefined
      const output = u.aggregated_output === undefined ? "" : str(u.aggregated_output)
      const exit = optional(u.exit_code, i32)
      const args = u.arguments
      if (output === FAIL || exit === FAIL || (args !== undefined && args !== null && !isJson(args))) return undefined
      return {
        ...head,
        type,
        command,
        ...(args === undefined || args === null ? {} : { arguments: args }),
        aggregated_output: output,
        ...(exit === undefined ? {} : { exit_code: exit }),
        status
      }
    }
    case "file_change": {
      const { changes, status } = u
      if (!Array.isArray(changes) || !(status === "completed" || status === "failed")) return undefined
      const list: Array<FileUpdateChange> = []
      for (const c of changes) {
        const one = change(c)
        if (one === FAIL) return undefined
        list.push(one)
      }
      const incomplete = optional(u.diff_incomplete, bool)
      const diff = optional(u.unified_diff, str)
      const additions = optional(u.additions, u64)
      const deletions = optional(u.deletions, u64)
      if (incomplete === FAIL || diff === FAIL || additions === FAIL || deletions === FAIL) return undefined
      return {
        ...head,
        type,
        ...(incomplete === undefined ? {} : { diff_incomplete: incomplete }),
        changes: list,
        status,
        ...(diff === undefined ? {} : { unified_diff: diff }),
        ...(additions === undefined ? {} : { additions }),
        ...(deletions === undefined ? {} : { deletions })
      }
    }
    default:
      return undefined
  }
}

/**
 * The event of an envelope value (a plain `JSON.parse` of one line) when it is an `error` event or
 * an `item.completed` of an agent message, plan, decision, command, file change or error item
 * that certainly decodes: exactly what `decodeEnvelope(value)` gives as its `event`. `undefined`
 * otherwise — not a rejection, only "use the Schema".
 */
export const decodeTextEventFast = (value: unknown): ThreadEvent | undefined => {
  if (!isObj(value) || typeof value.schema_version !== "string") return undefined
  const event = value.event
  if (!isObj(event)) return undefined
  if (event.type === "error") {
    return typeof event.message === "string"
      ? { type: "error", message: event.message }
      : undefined
  }
  if (event.type !== "item.completed" || !isObj(event.item)) return undefined
  const item = itemOf(event.item)
  return item === undefined ? undefined : { type: "item.completed", item }
}

const ORIGINS: ReadonlySet<string> = new Set(["user", "correction", "plan_approval", "continuation", "retry"])
const isOrigin = (u: unknown): u is "user" | "correction" | "plan_approval" | "continuation" | "retry" =>
  typeof u === "string" && ORIGINS.has(u)

const executionContext = (u: unknown): ExecutionContext | Fail => {
  if (!isObj(u)) return FAIL
  const { actor_id, origin, task_id, timestamp, turn_id } = u
  if (typeof task_id !== "string" || typeof turn_id !== "string" || typeof actor_id !== "string") return FAIL
  if (typeof timestamp !== "string" || !isOrigin(origin)) return FAIL
  const parent = optional(u.parent_actor_id, str)
  const goal = optional(u.goal, str)
  if (parent === FAIL || goal === FAIL) return FAIL
  return {
    task_id,
    turn_id,
    actor_id,
    ...(parent === undefined ? {} : { parent_actor_id: parent }),
    origin,
    timestamp,
    ...(goal === undefined ? {} : { goal })
  }
}

// A V3 usage counter: missing or null is 0.
const counter = (u: unknown): number | Fail => u === undefined || u === null ? 0 : u64(u)

const usage = (u: unknown): Usage | Fail => {
  if (!isObj(u)) return FAIL
  const input = counter(u.input_tokens)
  const cached = counter(u.cached_input_tokens)
  const creation = counter(u.cache_creation_tokens)
  const output = counter(u.output_tokens)
  if (input === FAIL || cached === FAIL || creation === FAIL || output === FAIL) return FAIL
  return { input_tokens: input, cached_input_tokens: cached, cache_creation_tokens: creation, output_tokens: output }
}

const lifecycleEvent = (event: Obj): ThreadEvent | undefined => {
  switch (event.type) {
    case "turn.started": {
      // Token breakdowns are rare: left to the Schema.
      if (event.token_breakdown !== undefined && event.token_breakdown !== null) return undefined
      const context = optional(event.context, executionContext)
      if (context === FAIL) return undefined
      return context === undefined ? { type: "turn.started" } : { type: "turn.started", context }
    }
    case "turn.completed": {
      const completed = optional(event.completed_at, str)
      const used = usage(event.usage)
      const sessions = event.in_progress_exec_sessions
      if (completed === FAIL || used === FAIL) return undefined
      // Missing, null and [] are absent; a list of strings is kept.
      const kept = sessions === undefined || sessions === null ? [] : strings(sessions)
      if (kept === FAIL) return undefined
      return {
        type: "turn.completed",
        ...(completed === undefined ? {} : { completed_at: completed }),
        usage: used,
        ...(kept.length === 0 ? {} : { in_progress_exec_sessions: kept })
      }
    }
    default:
      return undefined
  }
}

/**
 * The envelope of a `turn.started` (without a token breakdown) or `turn.completed` line value
 * that certainly decodes: exactly what `decodeEnvelope(value)` gives; `undefined` otherwise (use
 * the Schema). The classifier decodes every lifecycle line, two of every turn's.
 */
export const decodeLifecycleFast = (value: unknown): VersionedThreadEvent | undefined => {
  if (!isObj(value) || typeof value.schema_version !== "string" || !isObj(value.event)) return undefined
  const event = lifecycleEvent(value.event)
  return event === undefined ? undefined : { schema_version: value.schema_version, event }
}
