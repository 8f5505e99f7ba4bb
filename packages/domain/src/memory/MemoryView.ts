/**
 * The session memory view, `derived/memory.json` (docs/search.md#memory-view): the legacy
 * "session memory envelope" (schema 3) with integer `created_at` / `updated_at`, the rules of
 * writing it (content equivalence, preserved `created_at`), the lenient reading the queries
 * use (only `grounded_facts[*].fact` and the timestamps matter), and the pure fold that derives
 * a view from a session's log with the same fact rules as the eviction summary. A derived view
 * holds redacted text (docs/security.md): its facts, summaries and paths pass the redaction policy.
 */
import { Result, Schema, SchemaIssue } from "effect"
import { redactSecrets } from "../contract/Redaction.ts"
import type { ThreadEvent } from "../contract/ThreadEvent.ts"
import { isJsonObject, parseJsonText } from "../internal/jsonText.ts"
import { lazy } from "../internal/lazy.ts"
import { acceptFact, factCandidates } from "../log/EvictionSummary.ts"
import { formatRfc3339 } from "../log/Rfc3339.ts"

/** The schema version a written view carries when the host gave none. */
export const MEMORY_VIEW_SCHEMA_VERSION = 3

/** The `origin` of a view Logbook derived from the log (absent on a host-written view). */
export const DERIVED_MEMORY_ORIGIN = "derived"

/** One grounded fact with where it came from (`source` is optional on read: legacy views omit it). */
export const GroundedFact = Schema.Struct({
  fact: Schema.String,
  source: Schema.optionalKey(Schema.String)
})

/** One grounded fact. */
export type GroundedFact = typeof GroundedFact.Type

const strings = Schema.optionalKey(Schema.Array(Schema.String))

/**
 * `derived/memory.json` as written: the legacy envelope's fields in its order, plus integer
 * `created_at` / `updated_at` (Unix seconds) and the additive `origin` (`"derived"` on a view
 * Logbook built from the log). Unknown keys are dropped.
 */
export const SessionMemoryView = Schema.Struct({
  session_id: Schema.optionalKey(Schema.String),
  schema_version: Schema.optionalKey(Schema.NullOr(Schema.Int)),
  summary: Schema.String,
  objective: Schema.optionalKey(Schema.NullOr(Schema.String)),
  task_summary: Schema.NullOr(Schema.String),
  spec_summary: Schema.NullOr(Schema.String),
  evaluation_summary: Schema.NullOr(Schema.String),
  verification_summary: Schema.optionalKey(Schema.NullOr(Schema.String)),
  constraints: strings,
  touched_files: Schema.Array(Schema.String),
  open_questions: strings,
  verification_todo: strings,
  delegation_notes: strings,
  applied_intent_ids: strings,
  grounded_facts: Schema.Array(GroundedFact),
  pending_intents: Schema.optionalKey(Schema.Array(Schema.Json)),
  history_artifact_path: Schema.NullOr(Schema.String),
  generated_at: Schema.String,
  created_at: Schema.optionalKey(Schema.Int),
  updated_at: Schema.optionalKey(Schema.Int),
  origin: Schema.optionalKey(Schema.Literal(DERIVED_MEMORY_ORIGIN))
})

/** A session memory view. */
export type SessionMemoryView = typeof SessionMemoryView.Type

const decodeViewJson = Schema.decodeUnknownResult(Schema.fromJsonString(SessionMemoryView))
const encodeView = lazy(() => Schema.encodeSync(SessionMemoryView))

/** Decodes a whole view (what `logbook memory write` accepts); a failure says which field is wrong. */
export const decodeMemoryViewText = (text: string): Result.Result<SessionMemoryView, Schema.SchemaError> =>
  decodeViewJson(text)

/** The canonical bytes of a view: pretty JSON in the envelope's key order, with a final newline. */
export const encodeMemoryView = (view: SessionMemoryView): string => `${JSON.stringify(encodeView()(view), null, 2)}\n`

const VOLATILE_KEYS = new Set(["generated_at", "history_artifact_path", "created_at", "updated_at"])

const contentOf = (view: SessionMemoryView): string =>
  JSON.stringify(encodeView()(view), (key, value: unknown) => (VOLATILE_KEYS.has(key) ? undefined : value))

/** Two views are content-equivalent when every field except `generated_at`, `history_artifact_path`, `created_at`, `updated_at` is equal. */
export const isContentEquivalent = (a: SessionMemoryView, b: SessionMemoryView): boolean =>
  contentOf(a) === contentOf(b)

/** The outcome of {@link planMemoryViewWrite}: the view to write, or `undefined` when nothing changes. */
export interface MemoryViewWrite {
  readonly view: SessionMemoryView | undefined
}

/**
 * What writing `incoming` over `existing` means at `nowSeconds`: `session_id` becomes the raw id,
 * `schema_version` 3 when absent, `created_at` kept from the existing view (else `incoming`'s,
 * else now), `updated_at` now; nothing is written when the existing view is content-equivalent.
 */
export const planMemoryViewWrite = (
  existing: SessionMemoryView | undefined,
  incoming: SessionMemoryView,
  sessionId: string,
  nowSeconds: number
): MemoryViewWrite => {
  const view: SessionMemoryView = {
    ...incoming,
    session_id: sessionId,
    schema_version: incoming.schema_version ?? MEMORY_VIEW_SCHEMA_VERSION,
    created_at: existing?.created_at ?? incoming.created_at ?? nowSeconds,
    updated_at: nowSeconds
  }
  if (existing !== undefined && isContentEquivalent(existing, view)) return { view: undefined }
  return { view }
}

/**
 * What the queries read of a `memory.json`: each `grounded_facts` entry's `fact` when it is a
 * string (`undefined` keeps the index of an entry without one), and `created_at`, else
 * `updated_at`, when an integer.
 */
export interface MemoryFactsRead {
  readonly facts: ReadonlyArray<string | undefined>
  readonly createdAt: number | null
  /** The view says Logbook derived it from the log (`origin: "derived"`). */
  readonly derived: boolean
}

const integerOrNull = (value: unknown): number | null =>
  typeof value === "number" && Number.isSafeInteger(value) ? value : null

/**
 * Reads the facts of `memory.json` text leniently: it must be a JSON object whose
 * `grounded_facts` is an array; everything else is optional and opaque.
 */
export const readMemoryFactsText = (text: string): Result.Result<MemoryFactsRead, Schema.SchemaError> =>
  Result.flatMap(parseJsonText(text), (json) => {
    if (!isJsonObject(json) || !Array.isArray(json["grounded_facts"])) {
      return Result.fail(
        new Schema.SchemaError(
          new SchemaIssue.InvalidValue({ message: "Expected an object with a grounded_facts array" })
        )
      )
    }
    const entries: ReadonlyArray<unknown> = json["grounded_facts"]
    const facts = entries.map((entry) =>
      isJsonObject(entry) && typeof entry["fact"] === "string" ? entry["fact"] : undefined
    )
    const createdAt = integerOrNull(json["created_at"]) ?? integerOrNull(json["updated_at"])
    return Result.succeed({ facts, createdAt, derived: json["origin"] === DERIVED_MEMORY_ORIGIN })
  })

// ---------------------------------------------------------------------------------------------
// Derivation from the log

/** The running state of the memory derivation fold. */
export interface MemoryDerivationAcc {
  readonly facts: ReadonlyArray<GroundedFact>
  readonly objective: string | undefined
  readonly touchedFiles: ReadonlyArray<string>
  readonly turns: number
  readonly events: number
  readonly failures: number
  readonly lastMessage: string | undefined
  readonly verification: string | undefined
}

/** The empty derivation state. */
export const emptyMemoryDerivation: MemoryDerivationAcc = {
  facts: [],
  objective: undefined,
  touchedFiles: [],
  turns: 0,
  events: 0,
  failures: 0,
  lastMessage: undefined,
  verification: undefined
}

const VERIFICATION_EVENTS = new Set([
  "verification_passed",
  "verification_failed",
  "evaluation_passed",
  "evaluation_failed"
])

/**
 * The candidates one event contributes to a derived view, in order: the turn's goal, then
 * exactly the eviction summary's candidates (agent messages, plans, file changes, harness
 * messages, failures), then what only the memory view keeps: decisions, failed commands, error
 * items and verification outcomes without a message.
 */
export const memoryFactCandidates = (event: ThreadEvent): ReadonlyArray<string> => {
  const base = factCandidates(event)
  if (event.type === "turn.started") {
    const goal = event.context?.goal
    return goal === undefined ? base : [`goal: ${goal}`, ...base]
  }
  if (event.type !== "item.completed") return base
  const item = event.item
  switch (item.type) {
    case "decision":
      return [
        ...base,
        item.rationale.length > 0 ? `decision: ${item.summary} — ${item.rationale}` : `decision: ${item.summary}`
      ]
    case "command_execution":
      return item.status === "failed" || (item.exit_code !== undefined && item.exit_code !== 0)
        ? [...base, `command failed${item.exit_code === undefined ? "" : ` (exit ${item.exit_code})`}: ${item.command}`]
        : base
    case "error":
      return [...base, `error: ${item.message}`]
    case "harness":
      return item.message === undefined && VERIFICATION_EVENTS.has(item.event)
        ? [...base, item.event.replace("_", " ")]
        : base
    default:
      return base
  }
}

/** Where a derived fact came from: the turn (when inside one) and the byte offset of its event. */
export const factSource = (turn: number | undefined, offset: number): string =>
  turn === undefined ? `events.jsonl@${offset}` : `turn ${turn}, events.jsonl@${offset}`

/**
 * Adds one decoded event at byte `offset` (inside turn `turn`, when known) to the derivation:
 * grounded facts under the shared fact rules (normalised, deduplicated, at most 32, first kept),
 * the first goal as objective, touched files, counters, the last agent message and verification.
 */
export const addToMemoryDerivation = (
  acc: MemoryDerivationAcc,
  event: ThreadEvent,
  offset: number,
  turn: number | undefined
): MemoryDerivationAcc => {
  let facts = acc.facts
  let texts: Array<string> | undefined
  for (const candidate of memoryFactCandidates(event)) {
    texts ??= facts.map((f) => f.fact)
    const fact = acceptFact(texts, candidate)
    if (fact === undefined) continue
    texts.push(fact)
    facts = [...facts, { fact, source: factSource(turn, offset) }]
  }
  let { failures, lastMessage, objective, touchedFiles, turns, verification } = acc
  switch (event.type) {
    case "turn.started":
      turns++
      if (objective === undefined && event.context?.goal !== undefined) objective = event.context.goal
      break
    case "turn.failed":
    case "error":
      failures++
      break
    case "item.completed": {
      const item = event.item
      if (item.type === "agent_message") lastMessage = item.text
      if (item.type === "file_change") {
        const added = item.changes.map((c) => c.path).filter((p) => !touchedFiles.includes(p))
        if (added.length > 0) touchedFiles = [...touchedFiles, ...added]
      }
      if (item.type === "harness" && VERIFICATION_EVENTS.has(item.event)) {
        verification = item.message ?? item.event.replace("_", " ")
      }
      break
    }
    default:
      break
  }
  return { facts, objective, touchedFiles, turns, events: acc.events + 1, failures, lastMessage, verification }
}

/**
 * The view derived from a fold: a one-line summary, the objective (first goal), the last agent
 * message as task summary, sorted touched files, the grounded facts, `origin: "derived"`.
 * `createdAt` is when the session started (Unix seconds), `nowMs` the derivation time.
 */
export const derivedMemoryView = (
  acc: MemoryDerivationAcc,
  info: { readonly sessionId: string; readonly createdAt: number; readonly nowMs: number }
): SessionMemoryView => {
  const headline = acc.objective ?? acc.lastMessage
  const summary = `Derived from the log: ${acc.events} events in ${acc.turns} turn${acc.turns === 1 ? "" : "s"}` +
    `${acc.failures > 0 ? `, ${acc.failures} failure${acc.failures === 1 ? "" : "s"}` : ""}` +
    `${headline === undefined ? "" : `; ${normalizeHeadline(headline)}`}`
  const nullable = (text: string | undefined) => text === undefined ? null : redactSecrets(text)
  return {
    session_id: info.sessionId,
    schema_version: MEMORY_VIEW_SCHEMA_VERSION,
    summary: redactSecrets(summary),
    objective: nullable(acc.objective),
    task_summary: nullable(acc.lastMessage === undefined ? undefined : normalizeHeadline(acc.lastMessage)),
    spec_summary: null,
    evaluation_summary: null,
    verification_summary: nullable(acc.verification),
    touched_files: acc.touchedFiles.map(redactSecrets).sort(),
    grounded_facts: acc.facts.map((f) => ({ ...f, fact: redactSecrets(f.fact) })),
    history_artifact_path: "events.jsonl",
    generated_at: formatRfc3339(info.nowMs, "Z"),
    created_at: info.createdAt,
    updated_at: Math.floor(info.nowMs / 1000),
    origin: DERIVED_MEMORY_ORIGIN
  }
}

const normalizeHeadline = (text: string): string => acceptFact([], text) ?? ""
