/**
 * The matrix specification contract (docs/matrix.md#spec): what a coordinator asks the runtime to
 * orchestrate. Wire names are snake_case and are also the TypeScript field names, so a
 * decoded spec re-encodes to the same keys in the same order.
 *
 * Number ranges: capacities and quantities are u32 (at most 4 294 967 295) and timeouts are
 * u64 restricted to JavaScript safe integers. Pool usage sums are plain JS numbers: at most
 * 5 active attempts per matrix means at most 5 × (2^32 − 1) < 2^35 per pool, far below 2^53,
 * and IEEE addition of non-negative numbers is monotonic, so even a corrupt snapshot with
 * many attempts can only over-report usage, never wrap around and admit work.
 */
import { Effect, Schema } from "effect"

/** Largest u32 value: the ceiling for pool capacities and task quantities. */
export const MATRIX_U32_MAX = 4_294_967_295

/** A u32 integer (0 … 4 294 967 295). */
const U32 = Schema.Int.check(Schema.isUint32())

/** A u64 integer limited to the JavaScript safe range (0 … 2^53 − 1). */
const SafeU64 = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

/**
 * Named resource amounts (`{name → u32}`): pool capacities on the spec, required quantities
 * on a task.
 *
 * **Gotchas** Keys are arbitrary strings (even `__proto__`); read them with `Object.entries`
 * or `Object.hasOwn`, never by indexing, so inherited properties cannot pose as pools.
 */
export const MatrixResources = Schema.Record(Schema.String, U32)

/** Type of {@link MatrixResources}. */
export type MatrixResources = typeof MatrixResources.Type

/** Workspace access of a task: a `write` task runs alone in the shared workspace. */
export const MatrixAccess = Schema.Literals(["read", "write"])

/** Type of {@link MatrixAccess}. */
export type MatrixAccess = typeof MatrixAccess.Type

/** A string list that decodes to `[]` when its key is missing. */
const StringsOrEmpty = Schema.Array(Schema.String).pipe(Schema.withDecodingDefaultKey(Effect.succeed([])))

/**
 * One task of a matrix. Missing `dependencies`, `resources`, `replay_safe` and `inputs`
 * decode to `[]`, `{}`, `false`, `[]`; encoding always writes every field.
 */
export const MatrixTaskSpec = Schema.Struct({
  id: Schema.String,
  instructions: Schema.String,
  dependencies: StringsOrEmpty,
  workspace: Schema.String,
  access: MatrixAccess,
  checks: Schema.Array(Schema.String),
  resources: MatrixResources.pipe(Schema.withDecodingDefaultKey(Effect.succeed({}))),
  timeout_secs: SafeU64,
  replay_safe: Schema.Boolean.pipe(Schema.withDecodingDefaultKey(Effect.succeed(false))),
  inputs: StringsOrEmpty
})

/** Type of {@link MatrixTaskSpec}. */
export type MatrixTaskSpec = typeof MatrixTaskSpec.Type

/**
 * A matrix: an id, its tasks in declaration order (admission order) and its resource pools
 * (`resources`, default `{}`). Decoding checks shapes only; `Matrix.validateSpec` checks
 * the rules of docs/matrix.md#spec.
 */
export const MatrixSpec = Schema.Struct({
  id: Schema.String,
  tasks: Schema.Array(MatrixTaskSpec),
  resources: MatrixResources.pipe(Schema.withDecodingDefaultKey(Effect.succeed({})))
})

/** Type of {@link MatrixSpec}. */
export type MatrixSpec = typeof MatrixSpec.Type
