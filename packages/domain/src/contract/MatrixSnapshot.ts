/**
 * The matrix orchestration state as it travels on the wire (docs/matrix.md#spec): lifecycle, task
 * states, attempts, verification evidence and the runtime-made assignments. A
 * `MatrixSnapshot` is carried verbatim as the `matrix.updated` event, so its encoded fields
 * are exactly `spec, lifecycle, tasks, generation, revision`, in that order.
 */
import { Schema } from "effect"
import { lazy } from "../internal/lazy.ts"
import { nullWhenAbsent } from "./internal/eventFields.ts"
import { MatrixSpec } from "./MatrixSpec.ts"

/** Hard limit on concurrently active attempts, whatever the host configures. */
export const MATRIX_MAX_WORKERS = 5

/** The host's default worker cap (`max_concurrent`). */
export const MATRIX_DEFAULT_WORKERS = 3

/** Where a matrix is in its life; `succeeded` and `cancelled` are terminal. */
export const MatrixLifecycle = Schema.Literals([
  "created",
  "running",
  "paused",
  "verifying",
  "succeeded",
  "cancelled",
  "blocked"
])

/** Type of {@link MatrixLifecycle}. */
export type MatrixLifecycle = typeof MatrixLifecycle.Type

/** Status of one task; `failed`, `interrupted`, `timed_out` and `cleanup_uncertain` block. */
export const MatrixTaskStatus = Schema.Literals([
  "queued",
  "assigned",
  "executed",
  "verified",
  "failed",
  "interrupted",
  "timed_out",
  "cleanup_uncertain"
])

/** Type of {@link MatrixTaskStatus}. */
export type MatrixTaskStatus = typeof MatrixTaskStatus.Type

/** Which half of the work an attempt does: run the task, or re-run its checks. */
export const MatrixPhase = Schema.Literals(["execute", "verify"])

/** Type of {@link MatrixPhase}. */
export type MatrixPhase = typeof MatrixPhase.Type

/** How an attempt ended, as reported by its worker (or inferred by rollback / recovery). */
export const MatrixOutcome = Schema.Literals([
  "success",
  "failed",
  "interrupted",
  "timed_out",
  "cancelled",
  "permission_denied",
  "budget_exhausted"
])

/** Type of {@link MatrixOutcome}. */
export type MatrixOutcome = typeof MatrixOutcome.Type

/**
 * One check command run by a verify attempt, tied to the attempt, worker and generation that
 * ran it and to the logged event (`event_id`) that proves it. `exit_code` is null when the
 * command never produced one.
 *
 * Every nullable field here and below is a plain serde `Option`: always written (as `null` when
 * absent), and a missing key reads as `null`, as the reference reads it.
 */
export const MatrixCommandEvidence = Schema.Struct({
  command: Schema.String,
  attempt_id: Schema.String,
  worker_id: Schema.String,
  generation: Schema.String,
  event_id: Schema.String,
  exit_code: nullWhenAbsent(Schema.Int.check(Schema.isInt32())),
  cancelled: Schema.Boolean
})

/** Type of {@link MatrixCommandEvidence}. */
export type MatrixCommandEvidence = typeof MatrixCommandEvidence.Type

/**
 * One reservation of a task for a worker. It stays an active assignment (holding its worker
 * slot and resources) until `cleanup_confirmed`.
 */
export const MatrixAttempt = Schema.Struct({
  id: Schema.String,
  worker_id: Schema.String,
  phase: MatrixPhase,
  generation: nullWhenAbsent(Schema.String),
  launch_requested: Schema.Boolean,
  outcome: nullWhenAbsent(MatrixOutcome),
  cleanup_confirmed: Schema.Boolean,
  evidence: Schema.Array(MatrixCommandEvidence)
})

/** Type of {@link MatrixAttempt}. */
export type MatrixAttempt = typeof MatrixAttempt.Type

/** The state of one spec task: status, every attempt in order, automatic retries used (u8). */
export const MatrixTaskState = Schema.Struct({
  id: Schema.String,
  status: MatrixTaskStatus,
  attempts: Schema.Array(MatrixAttempt),
  automatic_retries: Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 255 }))
})

/** Type of {@link MatrixTaskState}. */
export type MatrixTaskState = typeof MatrixTaskState.Type

/**
 * The whole orchestration state of one matrix, and the payload of `matrix.updated`.
 * `generation` is the source fingerprint under verification (null when absent, and written
 * as `null`); `revision` (u64, JS safe range) grows by one per successful mutation.
 *
 * **Gotchas** Persist each new snapshot durably before any side effect that depends on it.
 */
export const MatrixSnapshot = Schema.Struct({
  spec: MatrixSpec,
  lifecycle: MatrixLifecycle,
  tasks: Schema.Array(MatrixTaskState),
  generation: nullWhenAbsent(Schema.String),
  revision: Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))
})

/** Type of {@link MatrixSnapshot}. */
export type MatrixSnapshot = typeof MatrixSnapshot.Type

/**
 * What the runtime hands a worker: ids are made by the runtime (never chosen by workers) and
 * the worker must echo them in its report and evidence.
 */
export const MatrixAssignment = Schema.Struct({
  task_id: Schema.String,
  attempt_id: Schema.String,
  worker_id: Schema.String,
  phase: MatrixPhase,
  generation: Schema.NullOr(Schema.String)
})

/** Type of {@link MatrixAssignment}. */
export type MatrixAssignment = typeof MatrixAssignment.Type

const encodeSnapshot = lazy(() => Schema.encodeSync(MatrixSnapshot))

/**
 * Canonical compact JSON of a snapshot: keys in declaration order, `generation` written as
 * `null` when absent, resource maps in the order they were decoded or built (so a decoded
 * snapshot re-encodes to its own bytes).
 *
 * **Gotchas** A hand-built value that violates the Schema (say a fractional revision) throws;
 * snapshots from decoding or from `Matrix` operations never do.
 */
export const encodeMatrixSnapshotJson = (snapshot: MatrixSnapshot): string => JSON.stringify(encodeSnapshot()(snapshot))

/**
 * The snapshot's fields as a JSON object body without braces (`"spec":…,"revision":7`), for
 * splicing inline after `"type":"matrix.updated",` in an event line.
 */
export const encodeMatrixSnapshotFields = (snapshot: MatrixSnapshot): string =>
  encodeMatrixSnapshotJson(snapshot).slice(1, -1)
