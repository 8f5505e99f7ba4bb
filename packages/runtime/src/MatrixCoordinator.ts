/**
 * The matrix orchestration state of one session as a host service (docs/matrix.md#state, docs/matrix.md#durability):
 * the pure `Matrix` operations over the snapshots replayed from the log, each successful
 * mutation appended as a `matrix.updated` event and made durable before it returns, so
 * "persist each mutation before effects" holds for every host by construction.
 */
import type { MatrixSnapshot, MatrixSpec } from "@logbook/domain"
import { Matrix, MATRIX_DEFAULT_WORKERS, MatrixError } from "@logbook/domain"
import { matrixState } from "@logbook/projections"
import type { AppendError, IdSource, SessionLog, StoreIoError } from "@logbook/store"
import { IdGenerator, SessionFs, validateWorkspace } from "@logbook/store"
import { Effect, Option, Result, SynchronizedRef } from "effect"

/** Why a coordinator operation failed: a rejected transition or replay, or a persistence failure. */
export type MatrixCoordinatorError = MatrixError | AppendError

/** Options of {@link makeMatrixCoordinator}. */
export interface MatrixCoordinatorOptions {
  /** The host's worker cap used when `reserveReady` gets none (default 3; the hard limit 5 applies anyway). */
  readonly maxConcurrent?: number | undefined
}

/**
 * The matrices of one session. Every mutation names its matrix by id and returns the new
 * snapshot only after its `matrix.updated` event is durable (appended, then the log's
 * durability barrier); a rejected mutation appends nothing and changes nothing.
 *
 * **Gotchas**: when persisting fails, the mutation fails and the event may or may not be in
 * the log ("possibly persisted"); the coordinator then forgets its memory and replays the log
 * on the next call, so memory never disagrees with the log. Do not act on a failed mutation;
 * `recover` sorts out an attempt left assigned. If replay fails (invalid history), every call
 * fails with that `MatrixError` for the life of the coordinator: admission stays closed.
 */
export interface MatrixCoordinator {
  /** The latest snapshot of every matrix, ordered by id. */
  readonly snapshots: Effect.Effect<ReadonlyMap<string, MatrixSnapshot>, MatrixError | StoreIoError>
  /** The latest snapshot of one matrix, if it exists. */
  readonly current: (id: string) => Effect.Effect<Option.Option<MatrixSnapshot>, MatrixError | StoreIoError>
  /**
   * Validates `spec` (pure rules, then the workspace below `workspaceRoot` on disk) and records
   * a new matrix at revision 0. An id that already exists is refused.
   */
  readonly create: (spec: MatrixSpec, workspaceRoot: string) => Effect.Effect<MatrixSnapshot, MatrixCoordinatorError>
  /** `Matrix.start`. */
  readonly start: (id: string) => Effect.Effect<MatrixSnapshot, MatrixCoordinatorError>
  /** `Matrix.pause`. */
  readonly pause: (id: string) => Effect.Effect<MatrixSnapshot, MatrixCoordinatorError>
  /** `Matrix.resume`. */
  readonly resume: (id: string) => Effect.Effect<MatrixSnapshot, MatrixCoordinatorError>
  /** `Matrix.cancel`; owned workers still need cleanup and reports. */
  readonly cancel: (id: string) => Effect.Effect<MatrixSnapshot, MatrixCoordinatorError>
  /**
   * `Matrix.reserveReady` with runtime-made UUIDs; `cap` defaults to the coordinator's
   * `maxConcurrent`. With no assignment nothing is appended.
   *
   * **Gotchas**: hand the assignments to workers only after this returned; then call
   * `markLaunchRequested` before each launch.
   */
  readonly reserveReady: (id: string, cap?: number) => Effect.Effect<Matrix.Reservation, MatrixCoordinatorError>
  /** `Matrix.markLaunchRequested`: launch the worker only after this returned. */
  readonly markLaunchRequested: (id: string, attemptId: string) => Effect.Effect<MatrixSnapshot, MatrixCoordinatorError>
  /** `Matrix.rollbackLaunch`: the worker never ran. */
  readonly rollbackLaunch: (id: string, attemptId: string) => Effect.Effect<MatrixSnapshot, MatrixCoordinatorError>
  /** `Matrix.report`: publish the worker's result only after this returned. */
  readonly report: (id: string, input: Matrix.ReportInput) => Effect.Effect<MatrixSnapshot, MatrixCoordinatorError>
  /** `Matrix.beginVerification` under a fresh fingerprint. */
  readonly beginVerification: (id: string, generation: string) => Effect.Effect<MatrixSnapshot, MatrixCoordinatorError>
  /** `Matrix.finalizeVerification` with the fingerprint re-taken after cleanup. */
  readonly finalizeVerification: (
    id: string,
    generation: string
  ) => Effect.Effect<MatrixSnapshot, MatrixCoordinatorError>
  /** `Matrix.invalidateVerification`: sources changed under verification. */
  readonly invalidateVerification: (
    id: string,
    generation: string
  ) => Effect.Effect<MatrixSnapshot, MatrixCoordinatorError>
  /** `Matrix.retry` of one task. */
  readonly retry: (id: string, taskId: string) => Effect.Effect<MatrixSnapshot, MatrixCoordinatorError>
  /** `Matrix.confirmCleanup` of a reported attempt. */
  readonly confirmCleanup: (
    id: string,
    attemptId: string,
    workerId: string
  ) => Effect.Effect<MatrixSnapshot, MatrixCoordinatorError>
  /**
   * `Matrix.recover` after a restart, failing closed: attempts whose launch may have happened
   * become `cleanup_uncertain` and block the matrix. Nothing is appended when nothing changes.
   */
  readonly recover: (id: string) => Effect.Effect<MatrixSnapshot, MatrixCoordinatorError>
}

/** What the coordinator knows: the replayed map, nothing (replay on next use), or a failed replay. */
type Known =
  | { readonly _tag: "Ready"; readonly matrices: ReadonlyMap<string, MatrixSnapshot> }
  | { readonly _tag: "Unknown" }
  | { readonly _tag: "Closed"; readonly error: MatrixError }

const UNKNOWN: Known = { _tag: "Unknown" }

/** The outcome of one call under the lock, and what the coordinator knows afterwards. */
type Step<A, E> = readonly [Result.Result<A, E>, Known]

type Matrices = ReadonlyMap<string, MatrixSnapshot>

const step = <A>(result: Result.Result<A, MatrixCoordinatorError>, known: Known): Step<A, MatrixCoordinatorError> => [
  result,
  known
]

/** A decided mutation: the value to return and the snapshot to persist (none when unchanged). */
interface Plan<A> {
  readonly value: A
  readonly snapshot: MatrixSnapshot | undefined
}

const q = (text: string): string => JSON.stringify(text)

const matrixIds = (ids: IdSource): Matrix.IdGenerator => ({ attemptId: ids.uuid, workerId: ids.uuid })

/**
 * Builds the coordinator of the session behind `log`; its `matrix.updated` checkpoints are
 * replayed on the first matrix call. Attempt and worker ids come from the `IdGenerator` reference (random
 * UUIDs unless a test provides a deterministic source); the workspace checks of `create` go
 * through `SessionFs`.
 *
 * **Gotchas**: an invalid history never fails the session; it closes every matrix operation
 * instead. An I/O error while replaying fails that call and the next call replays again.
 */
export const makeMatrixCoordinator = Effect.fn("MatrixCoordinator.make")(function*(
  log: SessionLog,
  options: MatrixCoordinatorOptions = {}
): Effect.fn.Return<MatrixCoordinator, StoreIoError, SessionFs> {
  const fs = yield* SessionFs
  const ids = matrixIds(yield* IdGenerator)
  const defaultCap = options.maxConcurrent ?? MATRIX_DEFAULT_WORKERS

  // Lazy: the first matrix call replays the log, so opening a session never streams the whole
  // file for hosts that do not use matrices (bench P3 keeps open O(1)).
  const initial: Known = UNKNOWN
  const ref = yield* SynchronizedRef.make<Known>(initial)

  /** The replayed map, replaying first when memory was dropped; the next `Known` comes along. */
  const load = (known: Known): Effect.Effect<Step<Matrices, MatrixError | StoreIoError>> =>
    Effect.gen(function*() {
      if (known._tag === "Ready") return [Result.succeed(known.matrices), known]
      if (known._tag === "Closed") return [Result.fail(known.error), known]
      const result = yield* Effect.result(matrixState(log))
      if (Result.isSuccess(result)) return [result, { _tag: "Ready", matrices: result.success }]
      const error = result.failure
      return [result, error._tag === "MatrixError" ? { _tag: "Closed", error } : UNKNOWN]
    })

  const snapshots = SynchronizedRef.modifyEffect(ref, load).pipe(
    Effect.flatMap((result) => Effect.fromResult(result)),
    Effect.withSpan("MatrixCoordinator.snapshots")
  )

  /**
   * Runs `decide` on the current map under the lock; a decided snapshot is appended and
   * flushed before the new map is installed. A rejection keeps the state; a persistence
   * failure drops it so the next call replays the log.
   */
  const transact = <A>(
    decide: (matrices: Matrices) => Result.Result<Plan<A>, MatrixError>
  ): Effect.Effect<A, MatrixCoordinatorError> =>
    SynchronizedRef.modifyEffect(ref, (known) =>
      Effect.gen(function*() {
        const [loaded, after] = yield* load(known)
        if (Result.isFailure(loaded)) return step<A>(Result.fail(loaded.failure), after)
        const plan = decide(loaded.success)
        if (Result.isFailure(plan)) return step<A>(Result.fail(plan.failure), after)
        const { snapshot, value } = plan.success
        if (snapshot === undefined) return step(Result.succeed(value), after)
        const persisted = yield* Effect.result(
          Effect.andThen(log.append({ type: "matrix.updated", ...snapshot }), log.flush)
        )
        if (Result.isFailure(persisted)) return step<A>(Result.fail(persisted.failure), UNKNOWN)
        const matrices = new Map(loaded.success)
        matrices.set(snapshot.spec.id, snapshot)
        return step(Result.succeed(value), { _tag: "Ready", matrices })
      })).pipe(Effect.flatMap((result) => Effect.fromResult(result)))

  /** One `Matrix` operation on the matrix `id`. */
  const operate = <T extends Matrix.Transition, A>(
    id: string,
    operation: (snapshot: MatrixSnapshot) => Result.Result<T, MatrixError>,
    value: (transition: T) => A
  ) =>
    transact((matrices) => {
      const current = matrices.get(id)
      if (current === undefined) return Result.fail(new MatrixError({ message: `unknown matrix ${q(id)}` }))
      return Result.flatMap(operation(current), (transition): Result.Result<Plan<A>, MatrixError> => {
        const next = transition.snapshot
        if (next === current) return Result.succeed({ value: value(transition), snapshot: undefined })
        // A changed snapshot must advance, or replay would reject the log (revision saturation).
        if (next.revision <= current.revision) {
          return Result.fail(new MatrixError({ message: "matrix revision did not advance" }))
        }
        return Result.succeed({ value: value(transition), snapshot: next })
      })
    })

  const snapshotOf = (transition: Matrix.Transition): MatrixSnapshot => transition.snapshot

  const create = Effect.fn("MatrixCoordinator.create")(function*(spec: MatrixSpec, workspaceRoot: string) {
    const valid = Matrix.validateSpec(spec)
    if (Result.isFailure(valid)) return yield* valid.failure
    // Checked before taking the lock: the disk check does not depend on the matrices.
    yield* Effect.provideService(validateWorkspace(spec, workspaceRoot), SessionFs, fs)
    return yield* transact((matrices) =>
      matrices.has(spec.id)
        ? Result.fail(new MatrixError({ message: `matrix ${q(spec.id)} already exists` }))
        : Result.map(Matrix.create(spec), ({ snapshot }) => ({ value: snapshot, snapshot }))
    )
  })

  return {
    snapshots,
    current: (id) => Effect.map(snapshots, (matrices) => Option.fromUndefinedOr(matrices.get(id))),
    create,
    start: (id) => operate(id, Matrix.start, snapshotOf).pipe(Effect.withSpan("MatrixCoordinator.start")),
    pause: (id) => operate(id, Matrix.pause, snapshotOf).pipe(Effect.withSpan("MatrixCoordinator.pause")),
    resume: (id) => operate(id, Matrix.resume, snapshotOf).pipe(Effect.withSpan("MatrixCoordinator.resume")),
    cancel: (id) => operate(id, Matrix.cancel, snapshotOf).pipe(Effect.withSpan("MatrixCoordinator.cancel")),
    reserveReady: (id, cap = defaultCap) =>
      operate(id, (s) => Matrix.reserveReady(s, cap, ids), (r) => r).pipe(
        Effect.withSpan("MatrixCoordinator.reserveReady")
      ),
    markLaunchRequested: (id, attemptId) =>
      operate(id, (s) => Matrix.markLaunchRequested(s, attemptId), snapshotOf).pipe(
        Effect.withSpan("MatrixCoordinator.markLaunchRequested")
      ),
    rollbackLaunch: (id, attemptId) =>
      operate(id, (s) => Matrix.rollbackLaunch(s, attemptId), snapshotOf).pipe(
        Effect.withSpan("MatrixCoordinator.rollbackLaunch")
      ),
    report: (id, input) =>
      operate(id, (s) => Matrix.report(s, input), snapshotOf).pipe(Effect.withSpan("MatrixCoordinator.report")),
    beginVerification: (id, generation) =>
      operate(id, (s) => Matrix.beginVerification(s, generation), snapshotOf).pipe(
        Effect.withSpan("MatrixCoordinator.beginVerification")
      ),
    finalizeVerification: (id, generation) =>
      operate(id, (s) => Matrix.finalizeVerification(s, generation), snapshotOf).pipe(
        Effect.withSpan("MatrixCoordinator.finalizeVerification")
      ),
    invalidateVerification: (id, generation) =>
      operate(id, (s) => Matrix.invalidateVerification(s, generation), snapshotOf).pipe(
        Effect.withSpan("MatrixCoordinator.invalidateVerification")
      ),
    retry: (id, taskId) =>
      operate(id, (s) => Matrix.retry(s, taskId), snapshotOf).pipe(Effect.withSpan("MatrixCoordinator.retry")),
    confirmCleanup: (id, attemptId, workerId) =>
      operate(id, (s) => Matrix.confirmCleanup(s, attemptId, workerId), snapshotOf).pipe(
        Effect.withSpan("MatrixCoordinator.confirmCleanup")
      ),
    recover: (id) => operate(id, Matrix.recover, snapshotOf).pipe(Effect.withSpan("MatrixCoordinator.recover"))
  }
})
