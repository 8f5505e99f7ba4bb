/**
 * Wire-format building blocks of the goal snapshot (docs/goals.md#goal-tracker): the tolerant
 * status / phase / event spellings and the field codecs that reproduce the reference's
 * serde attributes (`Option` read as null when absent, `skip_serializing_if` omissions,
 * `#[serde(default)]`). Kept private so `GoalTracker.ts` reads as the state machine only.
 */
import { Effect, Option, Schema, SchemaGetter } from "effect"

/** Every goal status, in the reference's declaration order. */
export const GOAL_STATUS_VALUES = [
  "active",
  "user_paused",
  "back_off_paused",
  "no_progress_paused",
  "infra_paused",
  "blocked",
  "budget_limited",
  "complete"
] as const

/** One goal status as written on the wire (snake_case). */
export type GoalStatusValue = typeof GOAL_STATUS_VALUES[number]

/** Every goal phase, in the reference's declaration order. */
export const GOAL_PHASE_VALUES = ["idle", "planning", "executing"] as const

/** One goal phase as written on the wire (snake_case). */
export type GoalPhaseValue = typeof GOAL_PHASE_VALUES[number]

/** Every known history event, plus the `unknown` catch-all last. */
export const GOAL_EVENT_VALUES = [
  "goal_created",
  "planning_started",
  "planning_completed",
  "planning_failed",
  "worker_started",
  "worker_completed",
  "worker_failed",
  "context_rotated",
  "goal_paused",
  "goal_resumed",
  "goal_completed",
  "goal_cleared",
  "budget_exceeded",
  "premature_stop_detected",
  "unknown"
] as const

/** One history event as written on the wire. */
export type GoalEventValue = typeof GOAL_EVENT_VALUES[number]

// Maps, not object literals: a wire string such as "constructor" must never hit a prototype key.
const statusSpellings: ReadonlyMap<string, GoalStatusValue> = new Map<string, GoalStatusValue>([
  ...GOAL_STATUS_VALUES.map((s) => [s, s] as const),
  ["Active", "active"],
  ["paused", "user_paused"],
  ["Paused", "user_paused"],
  ["doom_loop_paused", "user_paused"],
  ["BudgetLimited", "budget_limited"],
  ["Complete", "complete"]
])

const phaseSpellings: ReadonlyMap<string, GoalPhaseValue> = new Map<string, GoalPhaseValue>([
  ...GOAL_PHASE_VALUES.map((p) => [p, p] as const),
  ["Idle", "idle"],
  ["Planning", "planning"],
  ["Executing", "executing"]
])

const eventSpellings: ReadonlyMap<string, GoalEventValue> = new Map<string, GoalEventValue>(
  GOAL_EVENT_VALUES.map((e) => [e, e] as const)
)

/**
 * Total status decoding: the snake_case values, the legacy PascalCase / `paused` /
 * `doom_loop_paused` spellings, and `user_paused` for anything else, because an
 * unreadable status must restore as a resumable paused goal, never a self-driving one.
 */
export const goalStatusFromWire = (wire: string): GoalStatusValue => statusSpellings.get(wire) ?? "user_paused"

/**
 * Tolerant phase decoding (docs/differences.md): snake_case and PascalCase. An unknown phase
 * decodes as `executing`, so that restoring the snapshot treats the goal as interrupted
 * mid-work (idle + paused) instead of guessing it was quiescent and letting it drive itself.
 */
export const goalPhaseFromWire = (wire: string): GoalPhaseValue => phaseSpellings.get(wire) ?? "executing"

/** History events written by newer versions (or garbage) decode as `unknown`. */
export const goalEventFromWire = (wire: string): GoalEventValue => eventSpellings.get(wire) ?? "unknown"

const identity = <A>(a: A): A => a

/** A string on the wire that decodes to one of `values` through `normalise`; encodes as itself. */
export const tolerantLiteral = <const L extends ReadonlyArray<string>>(
  values: L,
  normalise: (wire: string) => L[number]
) =>
  Schema.String.pipe(Schema.decodeTo(Schema.Literals(values), {
    decode: SchemaGetter.transform(normalise),
    encode: SchemaGetter.transform(identity)
  }))

/** A non-negative integer (the reference's `u32` / `u64` counters). */
export const Count = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

/** A counter with `#[serde(default)]`: 0 when the key is absent, always written. */
export const countDefaultZero = Count.pipe(Schema.withDecodingDefaultKey(Effect.succeed(0)))

/** A signed integer with `#[serde(default)]` (the reference's `i64` token counters). */
export const intDefaultZero = Schema.Int.pipe(Schema.withDecodingDefaultKey(Effect.succeed(0)))

/** An `Option<T>` field without `skip_serializing_if`: absent or null reads as null; null is written. */
export const nullDefault = <S extends Schema.Top>(schema: S) =>
  Schema.NullOr(schema).pipe(Schema.withDecodingDefaultKey(Effect.succeed(null)))

/** An optional field that is omitted from the output when null (and read as null when absent or null). */
export const omittedWhenNull = <S extends Schema.Top>(schema: S) =>
  Schema.optionalKey(Schema.NullOr(schema)).pipe(
    Schema.decodeTo(Schema.NullOr(Schema.toType(schema)), {
      decode: SchemaGetter.transformOptional((o) => Option.some(Option.getOrNull(o))),
      encode: SchemaGetter.transformOptional((o) => Option.filter(o, (v) => v !== null))
    })
  )

/** A string list that reads as empty when absent and is omitted from the output when empty. */
export const stringsOmittedWhenEmpty = Schema.optionalKey(Schema.Array(Schema.String)).pipe(
  Schema.decodeTo(Schema.Array(Schema.String), {
    decode: SchemaGetter.transformOptional((o) => Option.some(Option.getOrElse(o, () => []))),
    encode: SchemaGetter.transformOptional((o) => Option.filter(o, (a) => a.length > 0))
  })
)
