/**
 * The matrix orchestration state machine (docs/matrix.md#state) as pure functions over a
 * `MatrixSnapshot`. Each operation returns the next snapshot (revision + 1) or a
 * `MatrixError` and never touches its input, so the host can persist the new snapshot as a
 * `matrix.updated` event before acting on it and simply drop it if persisting fails.
 *
 * Exported from the package as the `Matrix` namespace: `Matrix.create(spec)`,
 * `Matrix.reserveReady(snapshot, 3, ids)`, `Matrix.replay(snapshots)`, …
 */
import { Result } from "effect"
import type {
  MatrixAssignment,
  MatrixAttempt,
  MatrixCommandEvidence,
  MatrixOutcome,
  MatrixSnapshot,
  MatrixTaskState,
  MatrixTaskStatus
} from "../contract/MatrixSnapshot.ts"
import { MATRIX_MAX_WORKERS } from "../contract/MatrixSnapshot.ts"
import type { MatrixSpec } from "../contract/MatrixSpec.ts"
import {
  activeAttempt,
  evidenceValid,
  fail,
  hasActive,
  isBlank,
  isBlocker,
  isSafeRelativePath as isSafeRelativePathRule,
  isTerminal,
  messages,
  pairTasks,
  poolsOf,
  q,
  specProblem,
  statusAfter,
  statusBefore
} from "./internal/matrixRules.ts"
import type { TaskPair } from "./internal/matrixRules.ts"
import type { MatrixError } from "./MatrixError.ts"

export { decodeSnapshot, emptyReplay, fromSnapshot, replay, replayResult, replayStep } from "./MatrixReplay.ts"
export type { ReplayState } from "./MatrixReplay.ts"

/**
 * Source of runtime-made ids for new attempts and workers (UUID v4 in production, counters
 * in tests). Ids must be non-empty and never reused within a matrix; `reserveReady` fails
 * rather than record a duplicate.
 */
export interface IdGenerator {
  attemptId(): string
  workerId(): string
}

/** The result of a successful operation: the next snapshot to persist. */
export interface Transition {
  readonly snapshot: MatrixSnapshot
}

/**
 * The result of `reserveReady`: the next snapshot and the assignments it records. With no
 * assignments the snapshot is the input itself (nothing to persist, revision unchanged).
 */
export interface Reservation extends Transition {
  readonly assignments: ReadonlyArray<MatrixAssignment>
}

/** A worker's report on its attempt (docs/matrix.md#state). */
export interface ReportInput {
  readonly attemptId: string
  readonly workerId: string
  readonly outcome: MatrixOutcome
  readonly evidence: ReadonlyArray<MatrixCommandEvidence>
  readonly cleanupConfirmed: boolean
}

/**
 * True when `path` is non-empty, relative and has no `..` or root component. The store's
 * on-disk workspace validation uses it before resolving paths against the workspace root.
 */
export const isSafeRelativePath = (path: string): boolean => isSafeRelativePathRule(path)

/**
 * Checks every rule of docs/matrix.md#spec that needs no file system (ids, pools, instructions,
 * timeouts, checks, relative paths, dependencies, quantities, acyclicity) and returns the
 * spec unchanged when they hold. Cycle detection is iterative, so long chains are safe.
 */
export const validateSpec = (spec: MatrixSpec): Result.Result<MatrixSpec, MatrixError> => {
  const problem = specProblem(spec)
  return problem === undefined ? Result.succeed(spec) : fail(problem)
}

const succeed = (snapshot: MatrixSnapshot): Result.Result<Transition, MatrixError> => Result.succeed({ snapshot })

interface Patch {
  readonly lifecycle?: MatrixSnapshot["lifecycle"]
  readonly tasks?: ReadonlyArray<MatrixTaskState>
  readonly generation?: string | null
}

/** One successful mutation: applies the patch and bumps the revision (saturating). */
const commit = (snapshot: MatrixSnapshot, patch: Patch): MatrixSnapshot => ({
  spec: snapshot.spec,
  lifecycle: patch.lifecycle ?? snapshot.lifecycle,
  tasks: patch.tasks ?? snapshot.tasks,
  generation: patch.generation === undefined ? snapshot.generation : patch.generation,
  revision: snapshot.revision >= Number.MAX_SAFE_INTEGER ? Number.MAX_SAFE_INTEGER : snapshot.revision + 1
})

const replaceAt = (
  tasks: ReadonlyArray<MatrixTaskState>,
  index: number,
  task: MatrixTaskState
): ReadonlyArray<MatrixTaskState> => tasks.map((current, i) => i === index ? task : current)

const withLast = (state: MatrixTaskState, attempt: MatrixAttempt): MatrixAttempt[] => [
  ...state.attempts.slice(0, -1),
  attempt
]

interface Located {
  readonly index: number
  readonly pair: TaskPair
  readonly attempt: MatrixAttempt
}

/** The task whose last attempt has this id; earlier attempts are finished and immutable. */
const locate = (pairs: ReadonlyArray<TaskPair>, attemptId: string): Located | undefined => {
  for (let index = 0; index < pairs.length; index++) {
    const pair = pairs[index]
    const attempt = pair?.state.attempts.at(-1)
    if (pair !== undefined && attempt !== undefined && attempt.id === attemptId) return { index, pair, attempt }
  }
  return undefined
}

/** Lifecycle to return to when a matrix may proceed: verifying under a generation, else running. */
const proceeding = (snapshot: MatrixSnapshot): MatrixSnapshot["lifecycle"] =>
  snapshot.generation === null ? "running" : "verifying"

/**
 * Records a finished attempt (outcome set) and applies the retry and blocking rules of
 * docs/matrix.md#state. `afterCleanup` marks a late cleanup confirmation, which may unblock.
 */
const settle = (
  snapshot: MatrixSnapshot,
  found: Located,
  attempt: MatrixAttempt & { readonly outcome: MatrixOutcome },
  afterCleanup: boolean
): MatrixSnapshot => {
  const { spec, state } = found.pair
  const terminal = isTerminal(snapshot.lifecycle)
  let status: MatrixTaskStatus = statusAfter(attempt.outcome, attempt.phase, attempt.cleanup_confirmed)
  let retries = state.automatic_retries
  let lifecycle = snapshot.lifecycle
  if (!terminal) {
    const replayable = attempt.outcome === "interrupted" || attempt.outcome === "timed_out"
    if (attempt.cleanup_confirmed && replayable && spec.replay_safe && retries === 0) {
      retries = 1
      status = statusBefore(attempt.phase)
    } else if (attempt.outcome !== "success" || !attempt.cleanup_confirmed) {
      lifecycle = "blocked"
    }
  }
  const tasks = replaceAt(snapshot.tasks, found.index, {
    id: state.id,
    status,
    attempts: withLast(state, attempt),
    automatic_retries: retries
  })
  if (!terminal) {
    if (tasks.some((task) => isBlocker(task.status))) lifecycle = "blocked"
    else if (afterCleanup && lifecycle === "blocked") lifecycle = proceeding(snapshot)
  }
  return commit(snapshot, { lifecycle, tasks })
}

/**
 * A new matrix for a valid spec: lifecycle `created`, every task queued with no attempts,
 * no generation, revision 0. Workspace checks on disk are the store's job.
 */
export const create = (spec: MatrixSpec): Result.Result<Transition, MatrixError> => {
  const problem = specProblem(spec)
  if (problem !== undefined) return fail(problem)
  return succeed({
    spec,
    lifecycle: "created",
    tasks: spec.tasks.map((task) => ({ id: task.id, status: "queued", attempts: [], automatic_retries: 0 })),
    generation: null,
    revision: 0
  })
}

/** `created` → `running`. */
export const start = (snapshot: MatrixSnapshot): Result.Result<Transition, MatrixError> =>
  snapshot.lifecycle === "created"
    ? succeed(commit(snapshot, { lifecycle: "running" }))
    : fail(messages.onlyCreatedStarts)

/** `running` / `verifying` → `paused`: no new admissions, but owned work may still report. */
export const pause = (snapshot: MatrixSnapshot): Result.Result<Transition, MatrixError> =>
  snapshot.lifecycle === "running" || snapshot.lifecycle === "verifying"
    ? succeed(commit(snapshot, { lifecycle: "paused" }))
    : fail("only a running or verifying matrix can pause")

/** `paused` → `verifying` when a generation is set, else `running`. */
export const resume = (snapshot: MatrixSnapshot): Result.Result<Transition, MatrixError> =>
  snapshot.lifecycle === "paused"
    ? succeed(commit(snapshot, { lifecycle: proceeding(snapshot) }))
    : fail("only a paused matrix can resume")

/**
 * Any non-terminal lifecycle → `cancelled`.
 *
 * **Gotchas** Active attempts keep their reservations: the host must still clean up owned
 * workers and report or confirm them.
 */
export const cancel = (snapshot: MatrixSnapshot): Result.Result<Transition, MatrixError> =>
  isTerminal(snapshot.lifecycle)
    ? fail("a succeeded or cancelled matrix cannot be cancelled")
    : succeed(commit(snapshot, { lifecycle: "cancelled" }))

/**
 * Reserves ready tasks for new workers (docs/matrix.md#state) in one mutation, up to
 * `min(configuredCap, 5)` active attempts. Only a running (execute phase) or verifying
 * (verify phase) matrix admits work; otherwise, or when nothing is ready, the snapshot is
 * returned as is with no assignments. Tasks are considered in declaration order; a skipped
 * task (dependencies pending, writer conflict, pool exhausted) never blocks a later one.
 *
 * **Gotchas** Persist the new snapshot before handing any assignment to a worker.
 */
export const reserveReady = (
  snapshot: MatrixSnapshot,
  configuredCap: number,
  ids: IdGenerator
): Result.Result<Reservation, MatrixError> => {
  if (!Number.isInteger(configuredCap) || configuredCap < 0) {
    return fail("the worker cap must be a non-negative integer")
  }
  const unchanged: Result.Result<Reservation, MatrixError> = Result.succeed({ snapshot, assignments: [] })
  if (snapshot.lifecycle !== "running" && snapshot.lifecycle !== "verifying") return unchanged
  const paired = pairTasks(snapshot)
  if (Result.isFailure(paired)) return Result.fail(paired.failure)
  const pairs = paired.success
  const cap = Math.min(configuredCap, MATRIX_MAX_WORKERS)
  const phase = snapshot.lifecycle === "verifying" ? "verify" : "execute"
  const pools = poolsOf(snapshot.spec)
  const usage = new Map<string, number>()
  const attemptIds = new Set<string>()
  const workerIds = new Set<string>()
  let active = 0
  let activeWriter = false
  for (const { spec, state } of pairs) {
    for (const attempt of state.attempts) {
      attemptIds.add(attempt.id)
      workerIds.add(attempt.worker_id)
    }
    if (activeAttempt(state) === undefined) continue
    active++
    activeWriter = activeWriter || spec.access === "write"
    for (const [pool, quantity] of Object.entries(spec.resources)) usage.set(pool, (usage.get(pool) ?? 0) + quantity)
  }
  const status = new Map(pairs.map(({ state }) => [state.id, state.status] as const))
  const tasks = pairs.map(({ state }) => state)
  const assignments: Array<MatrixAssignment> = []
  for (let index = 0; index < pairs.length && active < cap; index++) {
    const pair = pairs[index]
    if (pair === undefined) continue
    const { spec, state } = pair
    const ready = phase === "execute"
      ? state.status === "queued" && spec.dependencies.every((dependency) => {
        const done = status.get(dependency)
        return done === "executed" || done === "verified"
      })
      : state.status === "executed"
    if (!ready) continue
    if (active > 0 && (activeWriter || spec.access === "write")) continue
    // Sums stay exact: each term is a u32 and at most 5 are active (see MatrixSpec.ts).
    const fits = Object.entries(spec.resources).every(([pool, need]) => {
      const capacity = pools.get(pool)
      return capacity !== undefined && (usage.get(pool) ?? 0) + need <= capacity
    })
    if (!fits) continue
    const attemptId = ids.attemptId()
    const workerId = ids.workerId()
    if (attemptId.length === 0 || workerId.length === 0 || attemptIds.has(attemptId) || workerIds.has(workerId)) {
      return fail(`the id generator returned an empty or reused id (attempt ${q(attemptId)}, worker ${q(workerId)})`)
    }
    attemptIds.add(attemptId)
    workerIds.add(workerId)
    const attempt: MatrixAttempt = {
      id: attemptId,
      worker_id: workerId,
      phase,
      generation: snapshot.generation,
      launch_requested: false,
      outcome: null,
      cleanup_confirmed: false,
      evidence: []
    }
    tasks[index] = { ...state, status: "assigned", attempts: [...state.attempts, attempt] }
    status.set(state.id, "assigned")
    assignments.push({
      task_id: state.id,
      attempt_id: attemptId,
      worker_id: workerId,
      phase,
      generation: attempt.generation
    })
    active++
    activeWriter = activeWriter || spec.access === "write"
    for (const [pool, quantity] of Object.entries(spec.resources)) usage.set(pool, (usage.get(pool) ?? 0) + quantity)
  }
  return assignments.length === 0
    ? unchanged
    : Result.succeed({ snapshot: commit(snapshot, { tasks }), assignments })
}

/**
 * Records that the runtime is about to launch the worker of an attempt that has no outcome.
 *
 * **Gotchas** Persist this before launching: `recover` treats a requested launch as one that
 * may have happened. A cancelled matrix launches nothing (roll the attempt back instead).
 */
export const markLaunchRequested = (
  snapshot: MatrixSnapshot,
  attemptId: string
): Result.Result<Transition, MatrixError> =>
  Result.flatMap(pairTasks(snapshot), (pairs) => {
    const found = locate(pairs, attemptId)
    if (found === undefined) return fail("stale or unknown launch attempt")
    if (found.attempt.outcome !== null || found.attempt.launch_requested) {
      return fail("launch already requested or attempt already reported")
    }
    if (isTerminal(snapshot.lifecycle)) return fail("a succeeded or cancelled matrix launches no work")
    const { state } = found.pair
    const attempt = { ...found.attempt, launch_requested: true }
    return succeed(
      commit(snapshot, {
        tasks: replaceAt(snapshot.tasks, found.index, { ...state, attempts: withLast(state, attempt) })
      })
    )
  })

/**
 * Undoes a reservation whose worker never ran (launch failed or was never requested): the
 * attempt ends `interrupted` with cleanup confirmed and the task returns to `queued`
 * (execute) or `executed` (verify). Not an automatic retry.
 */
export const rollbackLaunch = (snapshot: MatrixSnapshot, attemptId: string): Result.Result<Transition, MatrixError> =>
  Result.flatMap(pairTasks(snapshot), (pairs) => {
    const found = locate(pairs, attemptId)
    if (found === undefined) return fail("stale or unknown launch attempt")
    if (found.attempt.outcome !== null) return fail("a reported attempt cannot be rolled back")
    const { state } = found.pair
    const attempt: MatrixAttempt = { ...found.attempt, outcome: "interrupted", cleanup_confirmed: true }
    const task = { ...state, status: statusBefore(attempt.phase), attempts: withLast(state, attempt) }
    return succeed(commit(snapshot, { tasks: replaceAt(snapshot.tasks, found.index, task) }))
  })

/**
 * Records a worker's report (docs/matrix.md#state). The attempt must be its task's last, the worker
 * must match and the attempt must not have reported yet. A successful verify attempt must be
 * of the current generation and prove every check with evidence. A replay-safe task that was
 * interrupted or timed out with confirmed cleanup gets one automatic retry; any other
 * non-success, or unconfirmed cleanup, blocks the matrix until a coordinator decides.
 */
export const report = (snapshot: MatrixSnapshot, input: ReportInput): Result.Result<Transition, MatrixError> =>
  Result.flatMap(pairTasks(snapshot), (pairs) => {
    const found = locate(pairs, input.attemptId)
    if (found === undefined) return fail(messages.staleReport)
    const { attempt, pair } = found
    if (attempt.worker_id !== input.workerId || attempt.outcome !== null) return fail(messages.duplicateReport)
    if (pair.state.status !== "assigned") return fail(`task ${q(pair.state.id)} is ${pair.state.status}, not assigned`)
    if (
      input.outcome === "success" && attempt.phase === "verify" &&
      (attempt.generation !== snapshot.generation || !evidenceValid(pair.spec.checks, attempt, input.evidence))
    ) {
      return fail(messages.badEvidence)
    }
    const finished = {
      ...attempt,
      outcome: input.outcome,
      cleanup_confirmed: input.cleanupConfirmed,
      evidence: [...input.evidence]
    }
    return succeed(settle(snapshot, found, finished, false))
  })

/**
 * Confirms that the worker of a reported attempt has been cleaned up, releasing its
 * reservation. The task takes the status its outcome implies, with the same one automatic
 * retry as `report`; when no blocker remains, a blocked matrix proceeds again.
 */
export const confirmCleanup = (
  snapshot: MatrixSnapshot,
  attemptId: string,
  workerId: string
): Result.Result<Transition, MatrixError> =>
  Result.flatMap(pairTasks(snapshot), (pairs) => {
    const found = locate(pairs, attemptId)
    if (found === undefined) return fail("stale or unknown cleanup attempt")
    const { attempt } = found
    if (attempt.worker_id !== workerId) return fail("cleanup confirmation from the wrong worker identity")
    if (attempt.outcome === null) return fail("cleanup can only be confirmed after the attempt reported")
    if (attempt.cleanup_confirmed) return fail("cleanup is already confirmed")
    return succeed(settle(snapshot, found, { ...attempt, outcome: attempt.outcome, cleanup_confirmed: true }, true))
  })

/**
 * `running` → `verifying` under generation `generation` (a fingerprint of sources and
 * inputs), once every task is executed and no work is active.
 */
export const beginVerification = (
  snapshot: MatrixSnapshot,
  generation: string
): Result.Result<Transition, MatrixError> => {
  if (isBlank(generation)) return fail("a verification generation must be non-blank")
  if (snapshot.lifecycle !== "running") return fail("verification can only begin while the matrix is running")
  if (hasActive(snapshot.tasks)) return fail("verification cannot begin while work is active")
  if (!snapshot.tasks.every((task) => task.status === "executed")) {
    return fail("verification can only begin once every task is executed")
  }
  return succeed(commit(snapshot, { lifecycle: "verifying", generation }))
}

/**
 * `verifying` → `succeeded` when `generation` (re-fingerprinted by the host after cleanup)
 * still equals the stored one, no work is active and every task is verified.
 */
export const finalizeVerification = (
  snapshot: MatrixSnapshot,
  generation: string
): Result.Result<Transition, MatrixError> =>
  snapshot.lifecycle === "verifying" && snapshot.generation !== null && generation === snapshot.generation &&
    !hasActive(snapshot.tasks) && snapshot.tasks.every((task) => task.status === "verified")
    ? succeed(commit(snapshot, { lifecycle: "succeeded" }))
    : fail(messages.verificationIncomplete)

/**
 * Sources changed under verification: adopt the new `generation`, send every verified task
 * back to `executed` (its evidence is stale) and verify again. A paused matrix stays paused.
 */
export const invalidateVerification = (
  snapshot: MatrixSnapshot,
  generation: string
): Result.Result<Transition, MatrixError> => {
  if (isBlank(generation)) return fail("a verification generation must be non-blank")
  if (isTerminal(snapshot.lifecycle)) return fail("a succeeded or cancelled matrix cannot be re-verified")
  if (snapshot.tasks.some((task) => isBlocker(task.status))) {
    return fail("verification cannot be invalidated while tasks are blocked")
  }
  if (snapshot.generation === null) return fail("there is no verification generation to invalidate")
  if (hasActive(snapshot.tasks)) return fail("verification cannot be invalidated while work is active")
  const tasks = snapshot.tasks.map((task) =>
    task.status === "verified" ? { ...task, status: "executed" as const } : task
  )
  const lifecycle = snapshot.lifecycle === "paused" ? "paused" : "verifying"
  return succeed(commit(snapshot, { lifecycle, tasks, generation }))
}

/**
 * The coordinator's explicit retry of a failed, interrupted or timed-out task whose attempts
 * are all cleaned up: the task is queued again, verified tasks fall back to executed, the
 * generation is cleared and the matrix runs.
 */
export const retry = (snapshot: MatrixSnapshot, taskId: string): Result.Result<Transition, MatrixError> => {
  if (isTerminal(snapshot.lifecycle)) return fail("a succeeded or cancelled matrix cannot retry tasks")
  const index = snapshot.tasks.findIndex((task) => task.id === taskId)
  const target = snapshot.tasks[index]
  if (target === undefined) return fail(`unknown matrix task ${q(taskId)}`)
  if (hasActive(snapshot.tasks)) return fail("tasks cannot be retried while work is active")
  const retryable = target.status === "failed" || target.status === "interrupted" || target.status === "timed_out"
  if (!retryable || !target.attempts.every((attempt) => attempt.cleanup_confirmed)) {
    return fail(`task ${q(taskId)} is not failed, interrupted or timed out with confirmed cleanup`)
  }
  const tasks = snapshot.tasks.map((task, i): MatrixTaskState =>
    i === index
      ? { ...task, status: "queued" }
      : task.status === "verified"
      ? { ...task, status: "executed" }
      : task
  )
  return succeed(commit(snapshot, { lifecycle: "running", tasks, generation: null }))
}

/**
 * Explicit recovery after a restart, failing closed: an attempt whose launch was never
 * requested is rolled back; one whose launch may have happened but never reported becomes
 * `interrupted` with uncertain cleanup; both that and a reported but unconfirmed attempt
 * block the matrix (unless terminal). With no active attempt the snapshot is returned as is.
 */
export const recover = (snapshot: MatrixSnapshot): Result.Result<Transition, MatrixError> => {
  let uncertain = false
  let changed = false
  const tasks = snapshot.tasks.map((task): MatrixTaskState => {
    const attempt = activeAttempt(task)
    if (attempt === undefined) return task
    if (attempt.outcome !== null) {
      uncertain = true
      return task
    }
    changed = true
    if (!attempt.launch_requested) {
      const rolledBack: MatrixAttempt = { ...attempt, outcome: "interrupted", cleanup_confirmed: true }
      return {
        ...task,
        status: statusBefore(attempt.phase),
        attempts: task.attempts.map((a) => a === attempt ? rolledBack : a)
      }
    }
    uncertain = true
    const interrupted: MatrixAttempt = { ...attempt, outcome: "interrupted" }
    return { ...task, status: "cleanup_uncertain", attempts: task.attempts.map((a) => a === attempt ? interrupted : a) }
  })
  const lifecycle = uncertain && !isTerminal(snapshot.lifecycle) ? "blocked" : snapshot.lifecycle
  return changed || lifecycle !== snapshot.lifecycle
    ? succeed(commit(snapshot, { lifecycle, tasks }))
    : succeed(snapshot)
}
