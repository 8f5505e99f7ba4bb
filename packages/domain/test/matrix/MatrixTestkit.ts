/**
 * Shared helpers for the domain's matrix tests: the reference fixture spec, the testkit's spec
 * builders under short names, a deterministic id generator, valid verification evidence and
 * Result unwrapping.
 */
import { assert } from "@effect/vitest"
import { matrixSpec, matrixTask } from "@logbook/testkit"
import { Result, Schema } from "effect"
import { readFileSync } from "node:fs"
import type { MatrixCommandEvidence, MatrixSnapshot } from "../../src/contract/MatrixSnapshot.ts"
import { MatrixSpec } from "../../src/contract/MatrixSpec.ts"
import type { MatrixTaskSpec } from "../../src/contract/MatrixSpec.ts"
import type * as Matrix from "../../src/matrix/Matrix.ts"
import { MatrixError } from "../../src/matrix/MatrixError.ts"

/**
 * The `spec` of the reference `matrix` tool request, as text: the checked-in fixture
 * `test/fixtures/reference/vtcode-matrix-create-request.json` (see PROVENANCE.md there).
 */
export const FIXTURE_SPEC_JSON = JSON.stringify(
  JSON.parse(
    readFileSync(
      new URL("../../../../test/fixtures/reference/vtcode-matrix-create-request.json", import.meta.url),
      "utf8"
    )
  ).spec
)

/** The fixture spec, decoded. */
export const fixtureSpec: MatrixSpec = Schema.decodeUnknownSync(MatrixSpec)(JSON.parse(FIXTURE_SPEC_JSON))

/** A valid read task named `id`; override any field. */
export const task = matrixTask

/** A spec with id `m` over `tasks` and `resources` pools. */
export const spec = (tasks: ReadonlyArray<MatrixTaskSpec>, resources: Record<string, number> = {}): MatrixSpec =>
  matrixSpec(tasks, { resources })

/** Deterministic ids: `a1, a2, …` for attempts and `w1, w2, …` for workers. */
export const counterIds = (): Matrix.IdGenerator => {
  let attempts = 0
  let workers = 0
  return {
    attemptId: () => `a${++attempts}`,
    workerId: () => `w${++workers}`
  }
}

/** The success value, or a failed assertion naming the error. */
export const ok = <A>(result: Result.Result<A, MatrixError>): A => {
  if (Result.isFailure(result)) assert.fail(`expected success, got MatrixError: ${result.failure.message}`)
  return result.success
}

/** The error message, or a failed assertion when the result succeeded. */
export const errorOf = <A>(result: Result.Result<A, MatrixError>): string => {
  if (Result.isSuccess(result)) return assert.fail("expected a MatrixError, got success")
  assert.instanceOf(result.failure, MatrixError)
  assert.strictEqual(result.failure._tag, "MatrixError")
  return result.failure.message
}

/** Runs `f` with the snapshot of every successful step, threading it along. */
export const chain = (
  snapshot: MatrixSnapshot,
  ...steps: ReadonlyArray<(s: MatrixSnapshot) => Result.Result<{ readonly snapshot: MatrixSnapshot }, MatrixError>>
): MatrixSnapshot => steps.reduce((s, step) => ok(step(s)).snapshot, snapshot)

/** One passing evidence record per check, bound to the attempt's identity and generation. */
export const evidenceFor = (
  checks: ReadonlyArray<string>,
  attempt: { readonly id: string; readonly worker_id: string; readonly generation: string | null },
  prefix = "ev"
): Array<MatrixCommandEvidence> =>
  checks.map((command, i) => ({
    command,
    attempt_id: attempt.id,
    worker_id: attempt.worker_id,
    generation: attempt.generation ?? "",
    event_id: `${prefix}-${attempt.id}-${i}`,
    exit_code: 0,
    cancelled: false
  }))

/** The last attempt of task `taskId`, failing the test when there is none. */
export const lastAttempt = (snapshot: MatrixSnapshot, taskId: string) => {
  const attempt = snapshot.tasks.find((t) => t.id === taskId)?.attempts.at(-1)
  if (attempt === undefined) return assert.fail(`task ${taskId} has no attempt`)
  return attempt
}

/** The status of task `taskId`. */
export const statusOf = (snapshot: MatrixSnapshot, taskId: string) =>
  snapshot.tasks.find((t) => t.id === taskId)?.status

/** Freezes a value and everything reachable from it, so any mutation throws. */
export const deepFreeze = <A>(value: A): A => {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const inner of Object.values(value)) deepFreeze(inner)
  }
  return value
}

/**
 * Ids continuing the `a<n>` / `w<n>` sequence after the attempts already in `snapshot`, so
 * tests can keep reserving on one matrix without reusing an id.
 */
export const nextIds = (snapshot: MatrixSnapshot): Matrix.IdGenerator => {
  let n = snapshot.tasks.reduce((sum, t) => sum + t.attempts.length, 0)
  let m = n
  return {
    attemptId: () => `a${++n}`,
    workerId: () => `w${++m}`
  }
}
