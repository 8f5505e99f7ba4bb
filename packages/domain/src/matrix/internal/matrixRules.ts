/**
 * Private rules shared by the matrix transitions and snapshot validation: spec validation
 * (docs/matrix.md#spec), verification-evidence checks (docs/matrix.md#state), status helpers and the canonical
 * spec key used to detect a changed specification during replay.
 */
import { Result } from "effect"
import type {
  MatrixAttempt,
  MatrixCommandEvidence,
  MatrixLifecycle,
  MatrixOutcome,
  MatrixPhase,
  MatrixSnapshot,
  MatrixTaskState,
  MatrixTaskStatus
} from "../../contract/MatrixSnapshot.ts"
import type { MatrixSpec, MatrixTaskSpec } from "../../contract/MatrixSpec.ts"
import { MATRIX_U32_MAX } from "../../contract/MatrixSpec.ts"
import { MatrixError } from "../MatrixError.ts"

/** Messages with VT Code's wording; tests and hosts may match on them. */
export const messages = {
  needsIdAndTasks: "matrix needs an ID and tasks",
  cycle: "dependency cycle",
  onlyCreatedStarts: "only a created matrix can start",
  staleReport: "stale or unknown report attempt",
  duplicateReport: "duplicate report or wrong worker identity",
  badEvidence: "missing, unrelated, duplicate, cancelled, failed, or stale verification evidence",
  verificationIncomplete: "verification is incomplete, paused, or its generation changed",
  specChanged: "matrix specification changed after creation",
  revisionStale: "matrix revision did not advance"
} as const

/** Builds the error value (not a failed Result) for a message. */
export const matrixError = (message: string): MatrixError => new MatrixError({ message })

/** A failed Result carrying a `MatrixError` with `message`. */
export const fail = (message: string): Result.Result<never, MatrixError> => Result.fail(matrixError(message))

/** Quotes an id for a message so blank or odd ids stay visible. */
export const q = (value: string): string => JSON.stringify(value)

/** True for the empty string and whitespace-only strings. */
export const isBlank = (value: string): boolean => value.trim().length === 0

/**
 * True when `path` is non-empty, relative and made only of normal and `.` components: no
 * `..`, no root, no drive prefix. Both `/` and `\` count as separators so a path that is
 * harmless on one platform cannot climb out on another; NUL is never part of a path.
 */
export const isSafeRelativePath = (path: string): boolean => {
  if (path.length === 0 || path.includes("\0")) return false
  if (path.startsWith("/") || path.startsWith("\\") || /^[A-Za-z]:/.test(path)) return false
  return path.split(/[\\/]/).every((component) => component !== "..")
}

const isCapacity = (value: number): boolean => Number.isInteger(value) && value > 0 && value <= MATRIX_U32_MAX

/** The pools of a spec as a Map, so lookups never see inherited object properties. */
export const poolsOf = (spec: MatrixSpec): ReadonlyMap<string, number> => new Map(Object.entries(spec.resources))

const validateTaskShape = (task: MatrixTaskSpec): string | undefined => {
  const id = q(task.id)
  if (isBlank(task.instructions)) return `task ${id} needs non-blank instructions`
  if (!Number.isSafeInteger(task.timeout_secs) || task.timeout_secs <= 0) {
    return `task ${id} needs a positive timeout_secs`
  }
  if (task.checks.length === 0) return `task ${id} needs at least one check`
  if (task.checks.some(isBlank)) return `task ${id} has a blank check`
  if (!isSafeRelativePath(task.workspace)) {
    return `task ${id} workspace ${q(task.workspace)} must be a non-empty relative path without ".." or a root`
  }
  const input = task.inputs.find((p) => !isSafeRelativePath(p))
  if (input !== undefined) {
    return `task ${id} input ${q(input)} must be a non-empty relative path without ".." or a root`
  }
  return undefined
}

const validateTaskLinks = (
  task: MatrixTaskSpec,
  known: ReadonlySet<string>,
  pools: ReadonlyMap<string, number>
): string | undefined => {
  const id = q(task.id)
  const seen = new Set<string>()
  for (const dependency of task.dependencies) {
    if (!known.has(dependency)) return `task ${id} depends on unknown task ${q(dependency)}`
    if (seen.has(dependency)) return `task ${id} lists dependency ${q(dependency)} more than once`
    seen.add(dependency)
  }
  for (const [pool, quantity] of Object.entries(task.resources)) {
    const capacity = pools.get(pool)
    if (capacity === undefined) return `task ${id} requires unknown resource pool ${q(pool)}`
    if (!isCapacity(quantity)) return `task ${id} needs a positive quantity of ${q(pool)}`
    if (quantity > capacity) return `task ${id} needs more ${q(pool)} than the pool's capacity ${capacity}`
  }
  return undefined
}

/**
 * Kahn's algorithm over the dependency graph: iterative (no recursion, so a 100 000-task
 * chain cannot overflow the stack) and O(tasks + edges). Assumes ids are unique and every
 * dependency is known, which the earlier rules guarantee.
 */
const hasCycle = (spec: MatrixSpec): boolean => {
  const index = new Map(spec.tasks.map((task, i) => [task.id, i] as const))
  const pending = spec.tasks.map((task) => task.dependencies.length)
  const dependents: Array<Array<number>> = spec.tasks.map(() => [])
  spec.tasks.forEach((task, i) => {
    for (const dependency of task.dependencies) {
      const j = index.get(dependency)
      if (j !== undefined) dependents[j]?.push(i)
    }
  })
  const ready: Array<number> = []
  pending.forEach((count, i) => {
    if (count === 0) ready.push(i)
  })
  let marked = 0
  for (let next = ready.pop(); next !== undefined; next = ready.pop()) {
    marked++
    for (const dependent of dependents[next] ?? []) {
      const left = (pending[dependent] ?? 0) - 1
      pending[dependent] = left
      if (left === 0) ready.push(dependent)
    }
  }
  return marked !== spec.tasks.length
}

/** Every rule of docs/matrix.md#spec that needs no file system; the first violation wins. */
export const specProblem = (spec: MatrixSpec): string | undefined => {
  if (isBlank(spec.id) || spec.tasks.length === 0) return messages.needsIdAndTasks
  const pools = poolsOf(spec)
  for (const [pool, capacity] of pools) {
    if (isBlank(pool) || !isCapacity(capacity)) {
      return `resource pool ${q(pool)} needs a non-blank name and a capacity from 1 to ${MATRIX_U32_MAX}`
    }
  }
  const known = new Set<string>()
  for (const task of spec.tasks) {
    if (isBlank(task.id)) return "task IDs must be non-blank"
    if (known.has(task.id)) return `duplicate task ID ${q(task.id)}`
    known.add(task.id)
    const problem = validateTaskShape(task)
    if (problem !== undefined) return problem
  }
  for (const task of spec.tasks) {
    const problem = validateTaskLinks(task, known, pools)
    if (problem !== undefined) return problem
  }
  return hasCycle(spec) ? messages.cycle : undefined
}

/**
 * True when `evidence` proves every check of a verify attempt: one record per check in
 * order, bound to this attempt, worker and generation, with a non-blank unique event id,
 * exit code 0 and not cancelled (a cancelled check never counts, even with exit code 0).
 */
export const evidenceValid = (
  checks: ReadonlyArray<string>,
  attempt: MatrixAttempt,
  evidence: ReadonlyArray<MatrixCommandEvidence>
): boolean => {
  if (evidence.length !== checks.length || attempt.generation === null) return false
  const eventIds = new Set<string>()
  for (let i = 0; i < evidence.length; i++) {
    const record = evidence[i]
    if (
      record === undefined || record.command !== checks[i] || record.attempt_id !== attempt.id ||
      record.worker_id !== attempt.worker_id || record.generation !== attempt.generation ||
      isBlank(record.event_id) || eventIds.has(record.event_id) || record.exit_code !== 0 || record.cancelled
    ) {
      return false
    }
    eventIds.add(record.event_id)
  }
  return true
}

/** `succeeded` and `cancelled` end a matrix. */
export const isTerminal = (lifecycle: MatrixLifecycle): boolean =>
  lifecycle === "succeeded" || lifecycle === "cancelled"

/** Statuses that need an explicit coordinator decision before the matrix may proceed. */
export const isBlocker = (status: MatrixTaskStatus): boolean =>
  status === "failed" || status === "interrupted" || status === "timed_out" || status === "cleanup_uncertain"

/** The attempt still holding its reservation (cleanup not confirmed), if any. */
export const activeAttempt = (task: MatrixTaskState): MatrixAttempt | undefined =>
  task.attempts.find((attempt) => !attempt.cleanup_confirmed)

/** True when any attempt of the matrix still holds its reservation. */
export const hasActive = (tasks: ReadonlyArray<MatrixTaskState>): boolean =>
  tasks.some((task) => activeAttempt(task) !== undefined)

/** The status a finished attempt leaves its task in (before any automatic retry). */
export const statusAfter = (
  outcome: MatrixOutcome,
  phase: MatrixPhase,
  cleanupConfirmed: boolean
): MatrixTaskStatus => {
  if (!cleanupConfirmed) return "cleanup_uncertain"
  switch (outcome) {
    case "success":
      return phase === "execute" ? "executed" : "verified"
    case "interrupted":
      return "interrupted"
    case "timed_out":
      return "timed_out"
    default:
      return "failed"
  }
}

/** The status a task returns to when its attempt is retried or rolled back. */
export const statusBefore = (phase: MatrixPhase): MatrixTaskStatus => phase === "execute" ? "queued" : "executed"

/** A spec paired with its task state by position. */
export interface TaskPair {
  readonly spec: MatrixTaskSpec
  readonly state: MatrixTaskState
}

/**
 * Pairs spec tasks with task states by position, failing when they do not align 1:1 by id.
 * Every transition goes through this, so an unvalidated snapshot fails instead of crashing.
 */
export const pairTasks = (snapshot: MatrixSnapshot): Result.Result<ReadonlyArray<TaskPair>, MatrixError> => {
  const specs = snapshot.spec.tasks
  if (specs.length !== snapshot.tasks.length) return fail("matrix task states do not match the specification")
  const pairs: Array<TaskPair> = []
  for (let i = 0; i < specs.length; i++) {
    const spec = specs[i]
    const state = snapshot.tasks[i]
    if (spec === undefined || state === undefined || spec.id !== state.id) {
      return fail("matrix task states do not match the specification")
    }
    pairs.push({ spec, state })
  }
  return Result.succeed(pairs)
}

const sortedResources = (resources: Readonly<Record<string, number>>): Record<string, number> =>
  Object.fromEntries(Object.entries(resources).sort(([a], [b]) => compareCodePoints(a, b)))

/**
 * A string equal for two specs exactly when they mean the same thing: resource maps are
 * compared as maps (key order ignored), everything else as written.
 */
export const specKey = (spec: MatrixSpec): string =>
  JSON.stringify({
    id: spec.id,
    tasks: spec.tasks.map((task) => [
      task.id,
      task.instructions,
      task.dependencies,
      task.workspace,
      task.access,
      task.checks,
      sortedResources(task.resources),
      task.timeout_secs,
      task.replay_safe,
      task.inputs
    ]),
    resources: sortedResources(spec.resources)
  })

/** Orders strings by Unicode code point, i.e. by their UTF-8 bytes (the reference's map order). */
export const compareCodePoints = (a: string, b: string): number => {
  const left = Array.from(a)
  const right = Array.from(b)
  const length = Math.min(left.length, right.length)
  for (let i = 0; i < length; i++) {
    const x = left[i]?.codePointAt(0) ?? 0
    const y = right[i]?.codePointAt(0) ?? 0
    if (x !== y) return x - y
  }
  return left.length - right.length
}
