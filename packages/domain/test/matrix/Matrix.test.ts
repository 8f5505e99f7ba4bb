/**
 * The matrix state machine (docs/matrix.md#state): lifecycle transitions, admission,
 * launches, reports and evidence, retries, verification and fail-closed recovery.
 */
import { assert, describe, it } from "@effect/vitest"
import type { MatrixCommandEvidence, MatrixOutcome, MatrixSnapshot } from "../../src/contract/MatrixSnapshot.ts"
import { MATRIX_U32_MAX } from "../../src/contract/MatrixSpec.ts"
import type { MatrixSpec } from "../../src/contract/MatrixSpec.ts"
import * as Matrix from "../../src/matrix/Matrix.ts"
import {
  chain,
  counterIds,
  deepFreeze,
  errorOf,
  evidenceFor,
  fixtureSpec,
  lastAttempt,
  nextIds,
  ok,
  spec,
  statusOf,
  task
} from "./MatrixTestkit.ts"

const EVIDENCE_ERROR = "missing, unrelated, duplicate, cancelled, failed, or stale verification evidence"

const running = (s: MatrixSpec): MatrixSnapshot => chain(ok(Matrix.create(s)).snapshot, Matrix.start)

const reserve = (s: MatrixSnapshot, cap = 5, ids = nextIds(s)) => ok(Matrix.reserveReady(s, cap, ids))

const reportOn = (
  s: MatrixSnapshot,
  taskId: string,
  outcome: MatrixOutcome,
  options: { readonly cleanup?: boolean; readonly evidence?: ReadonlyArray<MatrixCommandEvidence> } = {}
) => {
  const attempt = lastAttempt(s, taskId)
  return Matrix.report(s, {
    attemptId: attempt.id,
    workerId: attempt.worker_id,
    outcome,
    evidence: options.evidence ?? [],
    cleanupConfirmed: options.cleanup ?? true
  })
}

const checksOf = (s: MatrixSnapshot, taskId: string) => s.spec.tasks.find((t) => t.id === taskId)?.checks ?? []

/** Reserves, launches and reports success until no more work is admitted. */
const runToCompletion = (start: MatrixSnapshot): MatrixSnapshot => {
  let s = start
  for (let round = 0; round < 50; round++) {
    const { assignments, snapshot } = ok(Matrix.reserveReady(s, 5, nextIds(s)))
    if (assignments.length === 0) return s
    s = snapshot
    for (const assignment of assignments) {
      s = ok(Matrix.markLaunchRequested(s, assignment.attempt_id)).snapshot
      const evidence = assignment.phase === "verify"
        ? evidenceFor(checksOf(s, assignment.task_id), lastAttempt(s, assignment.task_id))
        : []
      s = ok(reportOn(s, assignment.task_id, "success", { evidence })).snapshot
    }
  }
  return assert.fail("work did not settle")
}

const valid = (s: MatrixSnapshot): MatrixSnapshot => ok(Matrix.fromSnapshot(s))

describe("Matrix lifecycle", () => {
  it("starts only a created matrix and bumps the revision by one per mutation", () => {
    const created = ok(Matrix.create(fixtureSpec)).snapshot
    const started = ok(Matrix.start(created)).snapshot
    assert.strictEqual(started.lifecycle, "running")
    assert.strictEqual(started.revision, 1)
    assert.strictEqual(errorOf(Matrix.start(started)), "only a created matrix can start")
    const paused = ok(Matrix.pause(started)).snapshot
    assert.strictEqual(paused.revision, 2)
    assert.strictEqual(errorOf(Matrix.pause(paused)), "only a running or verifying matrix can pause")
    assert.strictEqual(errorOf(Matrix.resume(started)), "only a paused matrix can resume")
    assert.strictEqual(ok(Matrix.resume(paused)).snapshot.lifecycle, "running")
    assert.strictEqual(errorOf(Matrix.pause(created)), "only a running or verifying matrix can pause")
  })

  it("cancels any non-terminal matrix once", () => {
    const created = ok(Matrix.create(fixtureSpec)).snapshot
    const cancelled = ok(Matrix.cancel(created)).snapshot
    assert.strictEqual(cancelled.lifecycle, "cancelled")
    assert.strictEqual(errorOf(Matrix.cancel(cancelled)), "a succeeded or cancelled matrix cannot be cancelled")
    assert.strictEqual(errorOf(Matrix.start(cancelled)), "only a created matrix can start")
  })

  it("saturates the revision at the largest safe integer", () => {
    const created = ok(Matrix.create(fixtureSpec)).snapshot
    const top = { ...created, revision: Number.MAX_SAFE_INTEGER }
    assert.strictEqual(ok(Matrix.start(top)).snapshot.revision, Number.MAX_SAFE_INTEGER)
  })

  it("never modifies the snapshot it is given, on success or failure", () => {
    const s = deepFreeze(running(fixtureSpec))
    const before = JSON.stringify(s)
    const { snapshot } = reserve(s)
    deepFreeze(snapshot)
    ok(Matrix.markLaunchRequested(snapshot, lastAttempt(snapshot, "repair").id))
    errorOf(
      Matrix.report(snapshot, {
        attemptId: "nope",
        workerId: "w",
        outcome: "success",
        evidence: [],
        cleanupConfirmed: true
      })
    )
    ok(reportOn(snapshot, "repair", "failed"))
    ok(Matrix.recover(snapshot))
    assert.strictEqual(JSON.stringify(s), before)
  })
})

describe("Matrix admission", () => {
  it("admits nothing unless running or verifying, returning the same snapshot", () => {
    const created = ok(Matrix.create(fixtureSpec)).snapshot
    const result = reserve(created)
    assert.strictEqual(result.snapshot, created)
    assert.deepStrictEqual(result.assignments, [])
    const paused = chain(running(fixtureSpec), Matrix.pause)
    assert.deepStrictEqual(reserve(paused).assignments, [])
  })

  it("caps active workers at min(configured cap, 5), counting work already active", () => {
    const seven = spec(Array.from({ length: 7 }, (_, i) => task(`t${i}`)))
    const s = running(seven)
    assert.strictEqual(reserve(s, 10).assignments.length, 5)
    assert.strictEqual(reserve(s, 3).assignments.length, 3)
    assert.strictEqual(reserve(s, 0).assignments.length, 0)
    const ids = counterIds()
    const first = ok(Matrix.reserveReady(s, 2, ids))
    const second = ok(Matrix.reserveReady(first.snapshot, 3, ids))
    assert.deepStrictEqual(second.assignments.map((a) => a.task_id), ["t2"])
    assert.strictEqual(second.snapshot.revision, first.snapshot.revision + 1)
    assert.strictEqual(errorOf(Matrix.reserveReady(s, -1, ids)), "the worker cap must be a non-negative integer")
    assert.strictEqual(errorOf(Matrix.reserveReady(s, 1.5, ids)), "the worker cap must be a non-negative integer")
  })

  it("reserves in one mutation with runtime-made ids and the current phase and generation", () => {
    const s = running(spec([task("a"), task("b")]))
    const { assignments, snapshot } = reserve(s)
    assert.strictEqual(snapshot.revision, s.revision + 1)
    assert.deepStrictEqual(assignments, [
      { task_id: "a", attempt_id: "a1", worker_id: "w1", phase: "execute", generation: null },
      { task_id: "b", attempt_id: "a2", worker_id: "w2", phase: "execute", generation: null }
    ])
    assert.deepStrictEqual(snapshot.tasks[0], {
      id: "a",
      status: "assigned",
      attempts: [{
        id: "a1",
        worker_id: "w1",
        phase: "execute",
        generation: null,
        launch_requested: false,
        outcome: null,
        cleanup_confirmed: false,
        evidence: []
      }],
      automatic_retries: 0
    })
    valid(snapshot)
  })

  it("lets a writer run only alone, without letting a skipped writer block later readers", () => {
    const s = running(spec([task("r1"), task("w", { access: "write" }), task("r2")]))
    const first = reserve(s)
    assert.deepStrictEqual(first.assignments.map((a) => a.task_id), ["r1", "r2"])
    const writerFirst = running(spec([task("w", { access: "write" }), task("r1"), task("r2")]))
    const alone = reserve(writerFirst)
    assert.deepStrictEqual(alone.assignments.map((a) => a.task_id), ["w"])
    assert.deepStrictEqual(reserve(alone.snapshot).assignments, [])
  })

  it("admits a task only when all its dependencies are executed or verified", () => {
    const s = running(fixtureSpec)
    const first = reserve(s)
    assert.deepStrictEqual(first.assignments.map((a) => a.task_id), ["repair"])
    const launched = ok(Matrix.markLaunchRequested(first.snapshot, "a1")).snapshot
    const done = ok(reportOn(launched, "repair", "success")).snapshot
    assert.strictEqual(statusOf(done, "repair"), "executed")
    assert.deepStrictEqual(reserve(done).assignments.map((a) => a.task_id), ["ui-checks"])
  })

  it("admits a set of tasks atomically against pool capacities", () => {
    const pools = spec(
      [
        task("a", { resources: { gpu: 1 } }),
        task("b", { resources: { gpu: 2 } }),
        task("c", { resources: { gpu: 1, disk: 1 } }),
        task("d", { resources: { disk: 1 } })
      ],
      { gpu: 2, disk: 1 }
    )
    const first = reserve(running(pools))
    assert.deepStrictEqual(first.assignments.map((a) => a.task_id), ["a", "c"])
    const freed = chain(first.snapshot, (x) => reportOn(x, "a", "success"), (x) => reportOn(x, "c", "success"))
    assert.deepStrictEqual(reserve(freed).assignments.map((a) => a.task_id), ["b", "d"])
  })

  it("sums u32-maximum quantities without overflow", () => {
    const huge = spec(
      [
        task("a", { resources: { p: MATRIX_U32_MAX, q: MATRIX_U32_MAX } }),
        task("b", { resources: { p: MATRIX_U32_MAX } }),
        task("c", { resources: { p: 1 } }),
        task("d", { resources: { r: MATRIX_U32_MAX } })
      ],
      { p: MATRIX_U32_MAX, q: MATRIX_U32_MAX, r: MATRIX_U32_MAX }
    )
    const { assignments, snapshot } = reserve(running(huge))
    assert.deepStrictEqual(assignments.map((a) => a.task_id), ["a", "d"])
    valid(snapshot)
  })

  it("reserves executed tasks for verification under the current generation", () => {
    const executed = runToCompletion(running(spec([task("a"), task("b")])))
    const verifying = ok(Matrix.beginVerification(executed, "g1")).snapshot
    const { assignments } = reserve(verifying)
    assert.deepStrictEqual(assignments.map((a) => [a.task_id, a.phase, a.generation]), [
      ["a", "verify", "g1"],
      ["b", "verify", "g1"]
    ])
  })

  it("refuses empty or reused ids from the generator", () => {
    const s = running(spec([task("a"), task("b")]))
    const constant = { attemptId: () => "same", workerId: () => "w" }
    assert.match(errorOf(Matrix.reserveReady(s, 5, constant)), /empty or reused id/)
    const empty = { attemptId: () => "", workerId: () => "w" }
    assert.match(errorOf(Matrix.reserveReady(s, 5, empty)), /empty or reused id/)
  })
})

describe("Matrix launches", () => {
  it("marks a launch once, and never for a reported attempt or a cancelled matrix", () => {
    const { snapshot } = reserve(running(fixtureSpec))
    assert.strictEqual(errorOf(Matrix.markLaunchRequested(snapshot, "zzz")), "stale or unknown launch attempt")
    const launched = ok(Matrix.markLaunchRequested(snapshot, "a1")).snapshot
    assert.isTrue(lastAttempt(launched, "repair").launch_requested)
    assert.strictEqual(
      errorOf(Matrix.markLaunchRequested(launched, "a1")),
      "launch already requested or attempt already reported"
    )
    const reported = ok(reportOn(snapshot, "repair", "success")).snapshot
    assert.strictEqual(
      errorOf(Matrix.markLaunchRequested(reported, "a1")),
      "launch already requested or attempt already reported"
    )
    const cancelled = ok(Matrix.cancel(snapshot)).snapshot
    assert.strictEqual(
      errorOf(Matrix.markLaunchRequested(cancelled, "a1")),
      "a succeeded or cancelled matrix launches no work"
    )
  })

  it("rolls a launch back to queued (execute) or executed (verify) without spending an automatic retry", () => {
    const { snapshot } = reserve(running(fixtureSpec))
    const rolled = ok(Matrix.rollbackLaunch(snapshot, "a1")).snapshot
    assert.strictEqual(statusOf(rolled, "repair"), "queued")
    assert.deepStrictEqual(
      [lastAttempt(rolled, "repair").outcome, lastAttempt(rolled, "repair").cleanup_confirmed],
      ["interrupted", true]
    )
    assert.strictEqual(rolled.tasks[0]?.automatic_retries, 0)
    assert.strictEqual(rolled.lifecycle, "running")
    valid(rolled)
    assert.strictEqual(errorOf(Matrix.rollbackLaunch(rolled, "a1")), "a reported attempt cannot be rolled back")
    assert.strictEqual(errorOf(Matrix.rollbackLaunch(rolled, "nope")), "stale or unknown launch attempt")

    const verifying = ok(Matrix.beginVerification(runToCompletion(running(fixtureSpec)), "g")).snapshot
    const reserved = reserve(verifying).snapshot
    const back = ok(Matrix.rollbackLaunch(reserved, lastAttempt(reserved, "repair").id)).snapshot
    assert.strictEqual(statusOf(back, "repair"), "executed")
    valid(back)
  })
})

describe("Matrix reports", () => {
  const assigned = () => reserve(running(spec([task("a"), task("b", { replay_safe: true })]))).snapshot

  it("rejects stale, unknown, duplicate and wrong-worker reports", () => {
    const s = assigned()
    const base = { outcome: "success" as const, evidence: [], cleanupConfirmed: true }
    assert.strictEqual(
      errorOf(Matrix.report(s, { ...base, attemptId: "nope", workerId: "w1" })),
      "stale or unknown report attempt"
    )
    assert.strictEqual(
      errorOf(Matrix.report(s, { ...base, attemptId: "a1", workerId: "w2" })),
      "duplicate report or wrong worker identity"
    )
    const reported = ok(Matrix.report(s, { ...base, attemptId: "a1", workerId: "w1" })).snapshot
    assert.strictEqual(
      errorOf(Matrix.report(reported, { ...base, attemptId: "a1", workerId: "w1" })),
      "duplicate report or wrong worker identity"
    )
    const rolled = ok(Matrix.rollbackLaunch(s, "a2")).snapshot
    const again = reserve(rolled, 5, { attemptId: () => "a9", workerId: () => "w9" }).snapshot
    assert.strictEqual(
      errorOf(Matrix.report(again, { ...base, attemptId: "a2", workerId: "w2" })),
      "stale or unknown report attempt"
    )
  })

  it("maps outcomes to statuses and blocks on anything but a clean success", () => {
    const s = assigned()
    const success = ok(reportOn(s, "a", "success")).snapshot
    assert.deepStrictEqual([statusOf(success, "a"), success.lifecycle], ["executed", "running"])
    for (
      const [outcome, status] of [
        ["failed", "failed"],
        ["cancelled", "failed"],
        ["permission_denied", "failed"],
        ["budget_exhausted", "failed"],
        ["interrupted", "interrupted"],
        ["timed_out", "timed_out"]
      ] as const
    ) {
      const after = ok(reportOn(s, "a", outcome)).snapshot
      assert.deepStrictEqual([statusOf(after, "a"), after.lifecycle], [status, "blocked"], outcome)
      valid(after)
    }
    const uncertain = ok(reportOn(s, "a", "success", { cleanup: false })).snapshot
    assert.deepStrictEqual([statusOf(uncertain, "a"), uncertain.lifecycle], ["cleanup_uncertain", "blocked"])
    valid(uncertain)
  })

  it("gives a replay-safe task one automatic retry after a cleanly interrupted attempt, then blocks", () => {
    const s = assigned()
    const retried = ok(reportOn(s, "b", "interrupted")).snapshot
    assert.deepStrictEqual([statusOf(retried, "b"), retried.tasks[1]?.automatic_retries, retried.lifecycle], [
      "queued",
      1,
      "running"
    ])
    valid(retried)
    const again = reserve(retried, 5, { attemptId: () => "a3", workerId: () => "w3" }).snapshot
    const blocked = ok(reportOn(again, "b", "timed_out")).snapshot
    assert.deepStrictEqual([statusOf(blocked, "b"), blocked.lifecycle], ["timed_out", "blocked"])
    valid(blocked)
  })

  it("retries a replay-safe timed-out verify attempt back to executed", () => {
    const safe = spec([task("a", { replay_safe: true })])
    const verifying = ok(Matrix.beginVerification(runToCompletion(running(safe)), "g")).snapshot
    const reserved = reserve(verifying, 5, { attemptId: () => "v1", workerId: () => "vw1" }).snapshot
    const retried = ok(reportOn(reserved, "a", "timed_out")).snapshot
    assert.deepStrictEqual([statusOf(retried, "a"), retried.lifecycle], ["executed", "verifying"])
  })

  it("denies automatic retries to unsafe tasks, failed outcomes and uncertain cleanup", () => {
    const s = assigned()
    const unsafe = ok(reportOn(s, "a", "interrupted")).snapshot
    assert.deepStrictEqual([statusOf(unsafe, "a"), unsafe.lifecycle], ["interrupted", "blocked"])
    const failed = ok(reportOn(s, "b", "failed")).snapshot
    assert.deepStrictEqual([statusOf(failed, "b"), failed.tasks[1]?.automatic_retries, failed.lifecycle], [
      "failed",
      0,
      "blocked"
    ])
    const uncertain = ok(reportOn(s, "b", "interrupted", { cleanup: false })).snapshot
    assert.deepStrictEqual([statusOf(uncertain, "b"), uncertain.tasks[1]?.automatic_retries, uncertain.lifecycle], [
      "cleanup_uncertain",
      0,
      "blocked"
    ])
  })

  it("records reports in a cancelled matrix without retrying or reviving it", () => {
    const cancelled = ok(Matrix.cancel(assigned())).snapshot
    const after = ok(reportOn(cancelled, "b", "interrupted")).snapshot
    assert.deepStrictEqual([statusOf(after, "b"), after.tasks[1]?.automatic_retries, after.lifecycle], [
      "interrupted",
      0,
      "cancelled"
    ])
    valid(after)
  })
})

describe("Matrix verification evidence", () => {
  const twoChecks = spec([task("a", { checks: ["lint", "test"] }), task("b")])
  const verifyingReserved = () => {
    const verifying = ok(Matrix.beginVerification(runToCompletion(running(twoChecks)), "g1")).snapshot
    return reserve(verifying).snapshot
  }
  const sOf = verifyingReserved
  const attemptA = (s: MatrixSnapshot) => lastAttempt(s, "a")
  const goodEvidence = (s: MatrixSnapshot) => evidenceFor(["lint", "test"], attemptA(s))
  const reportA = (s: MatrixSnapshot, evidence: ReadonlyArray<MatrixCommandEvidence>) =>
    reportOn(s, "a", "success", { evidence })

  it("verifies a task whose evidence proves every check in order", () => {
    const s = sOf()
    const verified = ok(reportA(s, goodEvidence(s))).snapshot
    assert.strictEqual(statusOf(verified, "a"), "verified")
    valid(verified)
  })

  it("rejects missing, extra, reordered and unrelated evidence", () => {
    const s = sOf()
    const good = goodEvidence(s)
    const [lint, test] = good
    if (lint === undefined || test === undefined) return assert.fail("evidence")
    const cases: ReadonlyArray<ReadonlyArray<MatrixCommandEvidence>> = [
      [],
      [lint],
      [lint, test, { ...test, event_id: "extra" }],
      [test, lint],
      [lint, { ...test, command: "test --skip-all" }],
      [lint, { ...test, attempt_id: "a1" }],
      [lint, { ...test, worker_id: "w1" }],
      [lint, { ...test, generation: "g0" }]
    ]
    for (const evidence of cases) assert.strictEqual(errorOf(reportA(s, evidence)), EVIDENCE_ERROR)
  })

  it("rejects evidence from the wrong worker", () => {
    const s = sOf()
    const evidence = goodEvidence(s).map((e) => ({ ...e, worker_id: lastAttempt(s, "b").worker_id }))
    assert.strictEqual(errorOf(reportA(s, evidence)), EVIDENCE_ERROR)
  })

  it("never counts a cancelled check, even with exit code 0", () => {
    const s = sOf()
    const evidence = goodEvidence(s).map((e, i) => i === 1 ? { ...e, cancelled: true } : e)
    assert.strictEqual(errorOf(reportA(s, evidence)), EVIDENCE_ERROR)
  })

  it("rejects failed or exit-less checks and blank or duplicate event ids", () => {
    const s = sOf()
    const good = goodEvidence(s)
    const variants = [
      good.map((e, i) => i === 0 ? { ...e, exit_code: 1 } : e),
      good.map((e, i) => i === 0 ? { ...e, exit_code: null } : e),
      good.map((e, i) => i === 0 ? { ...e, event_id: " " } : e),
      good.map((e) => ({ ...e, event_id: "same" }))
    ]
    for (const evidence of variants) assert.strictEqual(errorOf(reportA(s, evidence)), EVIDENCE_ERROR)
  })

  it("rejects a success from an attempt of an older generation", () => {
    const s = sOf()
    const moved = { ...s, generation: "g2" }
    assert.strictEqual(errorOf(reportA(moved, goodEvidence(s))), EVIDENCE_ERROR)
  })

  it("does not require evidence for a failed verify attempt", () => {
    const s = sOf()
    const failed = ok(reportOn(s, "a", "failed")).snapshot
    assert.deepStrictEqual([statusOf(failed, "a"), failed.lifecycle], ["failed", "blocked"])
  })
})

describe("Matrix verification", () => {
  const executed = () => runToCompletion(running(fixtureSpec))

  it("begins verification only while running with every task executed and nothing active", () => {
    const s = executed()
    assert.strictEqual(errorOf(Matrix.beginVerification(s, " ")), "a verification generation must be non-blank")
    assert.strictEqual(
      errorOf(Matrix.beginVerification(ok(Matrix.pause(s)).snapshot, "g")),
      "verification can only begin while the matrix is running"
    )
    const partial = reserve(running(fixtureSpec)).snapshot
    assert.strictEqual(
      errorOf(Matrix.beginVerification(partial, "g")),
      "verification cannot begin while work is active"
    )
    assert.strictEqual(
      errorOf(Matrix.beginVerification(running(fixtureSpec), "g")),
      "verification can only begin once every task is executed"
    )
    const verifying = ok(Matrix.beginVerification(s, "g")).snapshot
    assert.deepStrictEqual([verifying.lifecycle, verifying.generation], ["verifying", "g"])
  })

  it("finalizes only the current generation once every task is verified", () => {
    const verifying = ok(Matrix.beginVerification(executed(), "g1")).snapshot
    const incomplete = "verification is incomplete, paused, or its generation changed"
    assert.strictEqual(errorOf(Matrix.finalizeVerification(verifying, "g1")), incomplete)
    const verified = runToCompletion(verifying)
    assert.strictEqual(statusOf(verified, "ui-checks"), "verified")
    assert.strictEqual(errorOf(Matrix.finalizeVerification(verified, "g2")), incomplete)
    assert.strictEqual(errorOf(Matrix.finalizeVerification(ok(Matrix.pause(verified)).snapshot, "g1")), incomplete)
    const done = ok(Matrix.finalizeVerification(verified, "g1")).snapshot
    assert.strictEqual(done.lifecycle, "succeeded")
    valid(done)
    assert.strictEqual(errorOf(Matrix.cancel(done)), "a succeeded or cancelled matrix cannot be cancelled")
  })

  it("invalidates a changed generation: verified tasks go back to executed and a paused matrix stays paused", () => {
    const verified = runToCompletion(ok(Matrix.beginVerification(executed(), "g1")).snapshot)
    const paused = ok(Matrix.pause(verified)).snapshot
    const invalidated = ok(Matrix.invalidateVerification(paused, "g2")).snapshot
    assert.deepStrictEqual(
      [invalidated.lifecycle, invalidated.generation, invalidated.tasks.map((t) => t.status)],
      ["paused", "g2", ["executed", "executed"]]
    )
    valid(invalidated)
    assert.strictEqual(ok(Matrix.resume(invalidated)).snapshot.lifecycle, "verifying")
    const live = ok(Matrix.invalidateVerification(verified, "g3")).snapshot
    assert.strictEqual(live.lifecycle, "verifying")
  })

  it("refuses to invalidate without a generation, with blockers or active work, or when terminal", () => {
    const s = executed()
    assert.strictEqual(
      errorOf(Matrix.invalidateVerification(s, "g")),
      "there is no verification generation to invalidate"
    )
    const verifying = ok(Matrix.beginVerification(s, "g1")).snapshot
    assert.strictEqual(
      errorOf(Matrix.invalidateVerification(verifying, "")),
      "a verification generation must be non-blank"
    )
    const active = reserve(verifying).snapshot
    assert.strictEqual(
      errorOf(Matrix.invalidateVerification(active, "g2")),
      "verification cannot be invalidated while work is active"
    )
    const failed = ok(reportOn(active, "repair", "failed")).snapshot
    assert.strictEqual(
      errorOf(Matrix.invalidateVerification(failed, "g2")),
      "verification cannot be invalidated while tasks are blocked"
    )
    assert.strictEqual(
      errorOf(Matrix.invalidateVerification(ok(Matrix.cancel(verifying)).snapshot, "g2")),
      "a succeeded or cancelled matrix cannot be re-verified"
    )
  })
})

describe("Matrix retries and cleanup", () => {
  const blockedOnA = () => {
    const s = reserve(running(spec([task("a"), task("b")]))).snapshot
    return chain(s, (x) => reportOn(x, "a", "failed"), (x) => reportOn(x, "b", "success"))
  }

  it("retries a failed task explicitly: queued, generation cleared, running", () => {
    const blocked = blockedOnA()
    assert.strictEqual(blocked.lifecycle, "blocked")
    const retried = ok(Matrix.retry(blocked, "a")).snapshot
    assert.deepStrictEqual([statusOf(retried, "a"), retried.lifecycle, retried.generation], ["queued", "running", null])
    valid(retried)
  })

  it("sends verified tasks back to executed when a task is retried during verification", () => {
    const verifying = ok(Matrix.beginVerification(runToCompletion(running(spec([task("a"), task("b")]))), "g"))
      .snapshot
    const reserved = reserve(verifying).snapshot
    const mixed = chain(
      reserved,
      (x) => reportOn(x, "a", "success", { evidence: evidenceFor(["check a"], lastAttempt(x, "a")) }),
      (x) => reportOn(x, "b", "failed")
    )
    assert.deepStrictEqual(mixed.tasks.map((t) => t.status), ["verified", "failed"])
    const retried = ok(Matrix.retry(mixed, "b")).snapshot
    assert.deepStrictEqual(
      [retried.tasks.map((t) => t.status), retried.generation, retried.lifecycle],
      [["executed", "queued"], null, "running"]
    )
    valid(retried)
  })

  it("refuses retries of unknown, healthy, uncleaned or active tasks and in terminal matrices", () => {
    const blocked = blockedOnA()
    assert.strictEqual(errorOf(Matrix.retry(blocked, "zz")), `unknown matrix task "zz"`)
    assert.match(errorOf(Matrix.retry(blocked, "b")), /is not failed, interrupted or timed out/)
    assert.strictEqual(
      errorOf(Matrix.retry(ok(Matrix.cancel(blocked)).snapshot, "a")),
      "a succeeded or cancelled matrix cannot retry tasks"
    )
    const s = reserve(running(spec([task("a"), task("b")]))).snapshot
    const oneFailed = ok(reportOn(s, "a", "failed")).snapshot
    assert.strictEqual(errorOf(Matrix.retry(oneFailed, "a")), "tasks cannot be retried while work is active")
    const uncertain = ok(reportOn(ok(reportOn(s, "b", "success")).snapshot, "a", "failed", { cleanup: false }))
      .snapshot
    assert.strictEqual(errorOf(Matrix.retry(uncertain, "a")), "tasks cannot be retried while work is active")
  })

  it("confirms cleanup only for the last reported attempt of the same worker, once", () => {
    const s = reserve(running(spec([task("a", { replay_safe: true })]))).snapshot
    assert.strictEqual(
      errorOf(Matrix.confirmCleanup(s, "a1", "w1")),
      "cleanup can only be confirmed after the attempt reported"
    )
    const uncertain = ok(reportOn(s, "a", "interrupted", { cleanup: false })).snapshot
    assert.strictEqual(errorOf(Matrix.confirmCleanup(uncertain, "x", "w1")), "stale or unknown cleanup attempt")
    assert.strictEqual(
      errorOf(Matrix.confirmCleanup(uncertain, "a1", "w2")),
      "cleanup confirmation from the wrong worker identity"
    )
    const confirmed = ok(Matrix.confirmCleanup(uncertain, "a1", "w1")).snapshot
    assert.deepStrictEqual(
      [statusOf(confirmed, "a"), confirmed.tasks[0]?.automatic_retries, confirmed.lifecycle],
      ["queued", 1, "running"]
    )
    valid(confirmed)
    assert.strictEqual(errorOf(Matrix.confirmCleanup(confirmed, "a1", "w1")), "cleanup is already confirmed")
  })

  it("keeps the matrix blocked when confirmed cleanup leaves a blocker, and unblocks when none is left", () => {
    const s = reserve(running(spec([task("a"), task("b")]))).snapshot
    const failedUncertain = ok(reportOn(s, "a", "failed", { cleanup: false })).snapshot
    const stillBlocked = ok(Matrix.confirmCleanup(failedUncertain, "a1", "w1")).snapshot
    assert.deepStrictEqual([statusOf(stillBlocked, "a"), stillBlocked.lifecycle], ["failed", "blocked"])
    const doneUncertain = ok(reportOn(s, "a", "success", { cleanup: false })).snapshot
    const clear = ok(Matrix.confirmCleanup(doneUncertain, "a1", "w1")).snapshot
    assert.deepStrictEqual([statusOf(clear, "a"), clear.lifecycle], ["executed", "running"])
    valid(clear)
  })
})

describe("Matrix recovery", () => {
  it("fails closed: rolls back unlaunched work, marks possibly launched work uncertain and blocks", () => {
    const s = reserve(running(spec([task("a"), task("b"), task("c")]))).snapshot
    const launched = chain(
      s,
      (x) => Matrix.markLaunchRequested(x, "a2"),
      (x) => Matrix.markLaunchRequested(x, "a3"),
      (x) => reportOn(x, "c", "success", { cleanup: false })
    )
    const recovered = ok(Matrix.recover(launched)).snapshot
    assert.strictEqual(recovered.revision, launched.revision + 1)
    assert.deepStrictEqual(recovered.tasks.map((t) => t.status), ["queued", "cleanup_uncertain", "cleanup_uncertain"])
    assert.deepStrictEqual(
      [lastAttempt(recovered, "b").outcome, lastAttempt(recovered, "b").cleanup_confirmed],
      ["interrupted", false]
    )
    assert.strictEqual(recovered.lifecycle, "blocked")
    valid(recovered)
    assert.deepStrictEqual(reserve(recovered).assignments, [])
  })

  it("only rolls back when no launch was requested, leaving the lifecycle as it was", () => {
    const s = reserve(running(spec([task("a")]))).snapshot
    const recovered = ok(Matrix.recover(s)).snapshot
    assert.deepStrictEqual([statusOf(recovered, "a"), recovered.lifecycle], ["queued", "running"])
  })

  it("blocks on reported but unconfirmed work, keeps terminal lifecycles, and is a no-op when idle", () => {
    const idle = running(fixtureSpec)
    assert.strictEqual(ok(Matrix.recover(idle)).snapshot, idle)
    const s = reserve(running(spec([task("a")]))).snapshot
    const uncertain = ok(reportOn(ok(Matrix.pause(s)).snapshot, "a", "success", { cleanup: false })).snapshot
    assert.strictEqual(uncertain.lifecycle, "blocked")
    assert.strictEqual(ok(Matrix.recover(uncertain)).snapshot, uncertain)
    const cancelled = chain(s, (x) => Matrix.markLaunchRequested(x, "a1"), Matrix.cancel)
    const recovered = ok(Matrix.recover(cancelled)).snapshot
    assert.deepStrictEqual([statusOf(recovered, "a"), recovered.lifecycle], ["cleanup_uncertain", "cancelled"])
  })
})

describe("Matrix end to end", () => {
  it("runs the fixture matrix to success, every snapshot valid and replayable", () => {
    const ids = counterIds()
    const history: Array<MatrixSnapshot> = []
    const record = (s: MatrixSnapshot) => {
      history.push(valid(s))
      return s
    }
    let s = record(ok(Matrix.create(fixtureSpec)).snapshot)
    s = record(ok(Matrix.start(s)).snapshot)
    for (const phaseStep of ["execute", "verify"] as const) {
      if (phaseStep === "verify") s = record(ok(Matrix.beginVerification(s, "fp-1")).snapshot)
      for (let round = 0; round < 5; round++) {
        const { assignments, snapshot } = ok(Matrix.reserveReady(s, 3, ids))
        if (assignments.length === 0) break
        s = record(snapshot)
        for (const a of assignments) {
          s = record(ok(Matrix.markLaunchRequested(s, a.attempt_id)).snapshot)
          const evidence = a.phase === "verify"
            ? evidenceFor(checksOf(s, a.task_id), {
              id: a.attempt_id,
              worker_id: a.worker_id,
              generation: a.generation
            })
            : []
          s = record(
            ok(Matrix.report(s, {
              attemptId: a.attempt_id,
              workerId: a.worker_id,
              outcome: "success",
              evidence,
              cleanupConfirmed: true
            })).snapshot
          )
        }
      }
    }
    s = record(ok(Matrix.finalizeVerification(s, "fp-1")).snapshot)
    assert.strictEqual(s.lifecycle, "succeeded")
    assert.strictEqual(s.revision, history.length - 1)
    const replayed = ok(Matrix.replay(history))
    assert.deepStrictEqual([...replayed.keys()], ["workspace-checks"])
    assert.strictEqual(replayed.get("workspace-checks"), s)
  })
})
