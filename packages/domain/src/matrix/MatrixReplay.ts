/**
 * Snapshot validation and replay of `matrix.updated` checkpoints (docs/matrix.md#replay). A host
 * rebuilds its orchestration state from the log with `replay`; any inconsistency fails
 * closed, and the host must then keep admission closed rather than guess.
 */
import { Result, Schema } from "effect"
import { MatrixSnapshot } from "../contract/MatrixSnapshot.ts"
import { MATRIX_MAX_WORKERS } from "../contract/MatrixSnapshot.ts"
import {
  activeAttempt,
  compareCodePoints,
  evidenceValid,
  fail,
  messages,
  pairTasks,
  poolsOf,
  q,
  specKey,
  specProblem
} from "./internal/matrixRules.ts"
import type { MatrixError } from "./MatrixError.ts"

const snapshotProblem = (snapshot: MatrixSnapshot): Result.Result<MatrixSnapshot, MatrixError> => {
  const invalidSpec = specProblem(snapshot.spec)
  if (invalidSpec !== undefined) return fail(invalidSpec)
  return Result.flatMap(pairTasks(snapshot), (pairs) => {
    const attemptIds = new Set<string>()
    const workerIds = new Set<string>()
    const usage = new Map<string, number>()
    let active = 0
    let activeWriter = false
    for (const { spec, state } of pairs) {
      const id = q(state.id)
      if (state.automatic_retries > 1) return fail(`task ${id} used more than one automatic retry`)
      const unconfirmed = state.attempts.filter((attempt) => !attempt.cleanup_confirmed).length
      if (unconfirmed > 1) return fail(`task ${id} has more than one unconfirmed attempt`)
      const holdsAttempt = state.status === "assigned" || state.status === "cleanup_uncertain"
      if ((unconfirmed === 1) !== holdsAttempt) {
        return fail(`task ${id} is ${state.status} but has ${unconfirmed === 1 ? "an" : "no"} unconfirmed attempt`)
      }
      for (const attempt of state.attempts) {
        if (attempt.id.length === 0 || attempt.worker_id.length === 0) {
          return fail(`task ${id} has an attempt with an empty attempt or worker ID`)
        }
        if (attemptIds.has(attempt.id)) return fail(`attempt ID ${q(attempt.id)} is used more than once`)
        if (workerIds.has(attempt.worker_id)) return fail(`worker ID ${q(attempt.worker_id)} is used more than once`)
        attemptIds.add(attempt.id)
        workerIds.add(attempt.worker_id)
      }
      if (state.status === "verified") {
        const last = state.attempts.at(-1)
        const proven = last !== undefined && last.cleanup_confirmed && last.outcome === "success" &&
          last.phase === "verify" && snapshot.generation !== null && last.generation === snapshot.generation &&
          evidenceValid(spec.checks, last, last.evidence)
        if (!proven) return fail(`verified task ${id} lacks verification evidence for the current generation`)
      }
      if (activeAttempt(state) !== undefined) {
        active++
        activeWriter = activeWriter || spec.access === "write"
        for (const [pool, quantity] of Object.entries(spec.resources)) {
          usage.set(pool, (usage.get(pool) ?? 0) + quantity)
        }
      }
    }
    if (active > MATRIX_MAX_WORKERS) return fail(`more than ${MATRIX_MAX_WORKERS} active attempts`)
    if (activeWriter && active !== 1) return fail("a writing task must be the only active attempt")
    const pools = poolsOf(snapshot.spec)
    for (const [pool, used] of usage) {
      if (used > (pools.get(pool) ?? 0)) return fail(`resource pool ${q(pool)} is over capacity`)
    }
    if (snapshot.lifecycle === "succeeded") {
      const done = pairs.every(({ state }) =>
        state.status === "verified" && state.attempts.every((attempt) => attempt.cleanup_confirmed)
      )
      if (!done) return fail("a succeeded matrix needs every task verified and every cleanup confirmed")
    }
    return Result.succeed(snapshot)
  })
}

/**
 * Validates a snapshot against every invariant of docs/matrix.md#replay (valid spec, task states
 * aligned 1:1 and in order with the spec's tasks, retry and attempt bookkeeping, unique
 * non-empty ids, proven verifications, worker cap, writer exclusivity, pool capacity,
 * success only when fully verified) and returns it unchanged when it holds.
 */
export const fromSnapshot = (snapshot: MatrixSnapshot): Result.Result<MatrixSnapshot, MatrixError> =>
  snapshotProblem(snapshot)

const decodeSnapshotResult = Schema.decodeUnknownResult(MatrixSnapshot)

/**
 * Decodes an untrusted value (for example a parsed `matrix.updated` payload) and validates it
 * with {@link fromSnapshot}; shape errors become a `MatrixError` naming the Schema issue.
 */
export const decodeSnapshot = (input: unknown): Result.Result<MatrixSnapshot, MatrixError> => {
  const decoded = decodeSnapshotResult(input)
  return Result.isFailure(decoded)
    ? fail(`invalid matrix snapshot: ${decoded.failure.message}`)
    : fromSnapshot(decoded.success)
}

/**
 * The state of an incremental replay: the latest valid snapshot per matrix id so far (with
 * its spec's comparison key). Start from {@link emptyReplay}, feed snapshots in log order to
 * {@link replayStep}, finish with {@link replayResult}. Treat it as opaque.
 */
export interface ReplayState {
  readonly latest: ReadonlyMap<string, { readonly snapshot: MatrixSnapshot; readonly key: string }>
}

/** A replay that has seen no snapshot yet. */
export const emptyReplay: ReplayState = { latest: new Map() }

/**
 * Folds one `matrix.updated` snapshot into a replay (the step of {@link replay}): a later
 * snapshot of a known matrix must carry the same spec and a strictly greater revision, and
 * every snapshot must pass {@link fromSnapshot}. Never mutates `state`, so a failed step
 * leaves the previous state usable for error reporting.
 *
 * **Gotchas** Each step copies the id map: cost is O(matrices) per snapshot, fine for the
 * handful of matrices a session holds, not for thousands.
 */
export const replayStep = (state: ReplayState, snapshot: MatrixSnapshot): Result.Result<ReplayState, MatrixError> => {
  const key = specKey(snapshot.spec)
  const previous = state.latest.get(snapshot.spec.id)
  if (previous !== undefined) {
    if (previous.key !== key) return fail(messages.specChanged)
    if (snapshot.revision <= previous.snapshot.revision) return fail(messages.revisionStale)
  }
  const valid = fromSnapshot(snapshot)
  if (Result.isFailure(valid)) return Result.fail(valid.failure)
  const latest = new Map(state.latest)
  latest.set(snapshot.spec.id, { snapshot, key })
  return Result.succeed({ latest })
}

/** The replayed snapshots as a map ordered by matrix id (code point order). */
export const replayResult = (state: ReplayState): ReadonlyMap<string, MatrixSnapshot> => {
  const ordered = new Map<string, MatrixSnapshot>()
  for (const id of [...state.latest.keys()].sort(compareCodePoints)) {
    const entry = state.latest.get(id)
    if (entry !== undefined) ordered.set(id, entry.snapshot)
  }
  return ordered
}

/**
 * Folds `matrix.updated` snapshots in log order into the latest valid snapshot per matrix
 * id, returned as a map ordered by id (code point order). A later snapshot of a known
 * matrix must carry the same spec and a strictly greater revision, and every snapshot must
 * pass {@link fromSnapshot}; the first violation fails the whole replay.
 *
 * **Gotchas** Fail closed: on error the host must keep admission closed for every matrix,
 * not fall back to a partial map.
 */
export const replay = (
  snapshots: Iterable<MatrixSnapshot>
): Result.Result<ReadonlyMap<string, MatrixSnapshot>, MatrixError> => {
  let state = emptyReplay
  for (const snapshot of snapshots) {
    const next = replayStep(state, snapshot)
    if (Result.isFailure(next)) return Result.fail(next.failure)
    state = next.success
  }
  return Result.succeed(replayResult(state))
}
