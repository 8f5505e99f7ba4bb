/**
 * Snapshot validation and replay (docs/matrix.md#replay): every invariant of `fromSnapshot`, the
 * replay integrity rules, decoding untrusted payloads and the canonical encoding.
 */
import { assert, describe, it } from "@effect/vitest"
import { Result, Schema } from "effect"
import {
  encodeMatrixSnapshotFields,
  encodeMatrixSnapshotJson,
  MatrixSnapshot
} from "../../src/contract/MatrixSnapshot.ts"
import type { MatrixAttempt, MatrixSnapshot as Snapshot, MatrixTaskState } from "../../src/contract/MatrixSnapshot.ts"
import type { MatrixSpec } from "../../src/contract/MatrixSpec.ts"
import * as Matrix from "../../src/matrix/Matrix.ts"
import { chain, errorOf, evidenceFor, fixtureSpec, lastAttempt, nextIds, ok, spec, task } from "./MatrixTestkit.ts"

const running = (s: MatrixSpec): Snapshot => chain(ok(Matrix.create(s)).snapshot, Matrix.start)
const reserved = (s: Snapshot) => ok(Matrix.reserveReady(s, 5, nextIds(s))).snapshot
const invalid = (s: Snapshot): string => errorOf(Matrix.fromSnapshot(s))

const attempt = (id: string, overrides: Partial<MatrixAttempt> = {}): MatrixAttempt => ({
  id,
  worker_id: `worker-${id}`,
  phase: "execute",
  generation: null,
  launch_requested: true,
  outcome: null,
  cleanup_confirmed: false,
  evidence: [],
  ...overrides
})

const withTasks = (s: Snapshot, f: (t: MatrixTaskState, i: number) => MatrixTaskState): Snapshot => ({
  ...s,
  tasks: s.tasks.map(f)
})

const assignAll = (s: Snapshot): Snapshot =>
  withTasks(s, (t) => ({ ...t, status: "assigned", attempts: [attempt(`x-${t.id}`)] }))

/** Both fixture tasks executed, verification begun under `g1`, `repair` verified. */
const oneVerified = (): Snapshot => {
  const executed = chain(
    running(fixtureSpec),
    (s) => Matrix.reserveReady(s, 5, nextIds(s)),
    (s) =>
      Matrix.report(s, { attemptId: "a1", workerId: "w1", outcome: "success", evidence: [], cleanupConfirmed: true }),
    (s) => Matrix.reserveReady(s, 5, nextIds(s)),
    (s) =>
      Matrix.report(s, { attemptId: "a2", workerId: "w2", outcome: "success", evidence: [], cleanupConfirmed: true }),
    (s) => Matrix.beginVerification(s, "g1"),
    (s) => Matrix.reserveReady(s, 1, nextIds(s))
  )
  const a = lastAttempt(executed, "repair")
  return ok(Matrix.report(executed, {
    attemptId: a.id,
    workerId: a.worker_id,
    outcome: "success",
    evidence: evidenceFor(["cargo check --locked"], a),
    cleanupConfirmed: true
  })).snapshot
}

describe("Matrix.fromSnapshot", () => {
  it("accepts snapshots produced by the state machine", () => {
    const s = oneVerified()
    assert.strictEqual(ok(Matrix.fromSnapshot(s)), s)
    ok(Matrix.fromSnapshot(reserved(running(spec([task("a"), task("b")])))))
  })

  it("rejects an invalid spec", () => {
    const s = running(fixtureSpec)
    assert.strictEqual(invalid({ ...s, spec: { ...s.spec, id: "" } }), "matrix needs an ID and tasks")
  })

  it("requires task states to align one to one, in order, with the spec's tasks", () => {
    const s = running(fixtureSpec)
    const message = "matrix task states do not match the specification"
    assert.strictEqual(invalid({ ...s, tasks: s.tasks.slice(1) }), message)
    assert.strictEqual(invalid({ ...s, tasks: [...s.tasks].reverse() }), message)
    assert.strictEqual(invalid({ ...s, tasks: [...s.tasks, ...s.tasks] }), message)
  })

  it("allows at most one automatic retry", () => {
    const s = withTasks(running(fixtureSpec), (t) => ({ ...t, automatic_retries: 2 }))
    assert.strictEqual(invalid(s), `task "repair" used more than one automatic retry`)
  })

  it("requires exactly one unconfirmed attempt for assigned and cleanup_uncertain tasks, and none otherwise", () => {
    const s = running(spec([task("a")]))
    assert.strictEqual(
      invalid(withTasks(s, (t) => ({ ...t, status: "assigned", attempts: [attempt("1"), attempt("2")] }))),
      `task "a" has more than one unconfirmed attempt`
    )
    assert.strictEqual(
      invalid(withTasks(s, (t) => ({ ...t, status: "assigned" }))),
      `task "a" is assigned but has no unconfirmed attempt`
    )
    assert.strictEqual(
      invalid(withTasks(s, (t) => ({ ...t, status: "cleanup_uncertain" }))),
      `task "a" is cleanup_uncertain but has no unconfirmed attempt`
    )
    assert.strictEqual(
      invalid(withTasks(s, (t) => ({ ...t, attempts: [attempt("1")] }))),
      `task "a" is queued but has an unconfirmed attempt`
    )
  })

  it("requires non-empty, globally unique attempt and worker ids", () => {
    const s = running(spec([task("a"), task("b")]))
    const done = (id: string, worker: string) =>
      attempt(id, { worker_id: worker, outcome: "interrupted", cleanup_confirmed: true })
    assert.strictEqual(
      invalid(withTasks(s, (t) => ({ ...t, attempts: [done("same", `w-${t.id}`)] }))),
      `attempt ID "same" is used more than once`
    )
    assert.strictEqual(
      invalid(withTasks(s, (t) => ({ ...t, attempts: [done(`x-${t.id}`, "w")] }))),
      `worker ID "w" is used more than once`
    )
    assert.strictEqual(
      invalid(withTasks(s, (t) => ({ ...t, attempts: [done("", `w-${t.id}`)] }))),
      `task "a" has an attempt with an empty attempt or worker ID`
    )
  })

  it("requires a verified task to hold passing evidence of the current generation", () => {
    const s = oneVerified()
    const message = `verified task "repair" lacks verification evidence for the current generation`
    assert.strictEqual(invalid({ ...s, generation: "g2" }), message)
    const tamper = (f: (a: MatrixAttempt) => MatrixAttempt) =>
      withTasks(
        s,
        (t) =>
          t.id === "repair" ? { ...t, attempts: t.attempts.map((a, i, all) => i === all.length - 1 ? f(a) : a) } : t
      )
    assert.strictEqual(invalid(tamper((a) => ({ ...a, evidence: [] }))), message)
    assert.strictEqual(
      invalid(tamper((a) => ({ ...a, evidence: a.evidence.map((e) => ({ ...e, cancelled: true })) }))),
      message
    )
    assert.strictEqual(invalid(tamper((a) => ({ ...a, phase: "execute" }))), message)
    assert.strictEqual(invalid(tamper((a) => ({ ...a, outcome: "failed" }))), message)
    assert.strictEqual(
      invalid(withTasks(running(fixtureSpec), (t) => ({ ...t, status: "verified" }))),
      message
    )
  })

  it("allows at most five active attempts", () => {
    const six = running(spec(Array.from({ length: 6 }, (_, i) => task(`t${i}`))))
    assert.strictEqual(invalid(assignAll(six)), "more than 5 active attempts")
    ok(Matrix.fromSnapshot(assignAll(running(spec(Array.from({ length: 5 }, (_, i) => task(`t${i}`)))))))
  })

  it("lets a writing task be active only alone", () => {
    const s = running(spec([task("w", { access: "write" }), task("r")]))
    assert.strictEqual(invalid(assignAll(s)), "a writing task must be the only active attempt")
  })

  it("keeps active pool usage within capacity, even at the u32 maximum", () => {
    const s = running(spec([task("a", { resources: { p: 1 } }), task("b", { resources: { p: 1 } })], { p: 1 }))
    assert.strictEqual(invalid(assignAll(s)), `resource pool "p" is over capacity`)
    const max = 4_294_967_295
    const huge = running(spec([task("a", { resources: { p: max } }), task("b", { resources: { p: max } })], { p: max }))
    assert.strictEqual(invalid(assignAll(huge)), `resource pool "p" is over capacity`)
  })

  it("allows success only when every task is verified", () => {
    const s = oneVerified()
    assert.strictEqual(
      invalid({ ...s, lifecycle: "succeeded" }),
      "a succeeded matrix needs every task verified and every cleanup confirmed"
    )
  })
})

describe("Matrix.replay", () => {
  const created = (id: string) => ok(Matrix.create({ ...fixtureSpec, id })).snapshot

  it("returns an empty map for no snapshots", () => {
    assert.strictEqual(ok(Matrix.replay([])).size, 0)
  })

  it("keeps the latest snapshot per matrix, ordered by id in code point order", () => {
    const ids = ["b", "\u{1F600}", "a", "\uFFFD"]
    const first = ids.map(created)
    const later = first.map((s) => ok(Matrix.start(s)).snapshot)
    const replayed = ok(Matrix.replay([...first, ...later]))
    assert.deepStrictEqual([...replayed.keys()], ["a", "b", "\uFFFD", "\u{1F600}"])
    assert.deepStrictEqual([...replayed.values()].map((s) => s.revision), [1, 1, 1, 1])
  })

  it("fails closed when a revision does not advance", () => {
    const s = created("m")
    const next = ok(Matrix.start(s)).snapshot
    assert.strictEqual(errorOf(Matrix.replay([s, s])), "matrix revision did not advance")
    assert.strictEqual(errorOf(Matrix.replay([next, s])), "matrix revision did not advance")
  })

  it("fails closed when the spec changes, but not when only resource key order differs", () => {
    const s = created("m")
    const changed = { ...ok(Matrix.start(s)).snapshot, spec: { ...s.spec, tasks: s.spec.tasks.slice(0, 1) } }
    assert.strictEqual(errorOf(Matrix.replay([s, changed])), "matrix specification changed after creation")
    const reordered = {
      ...ok(Matrix.start(s)).snapshot,
      spec: { ...s.spec, resources: { device: 1, "cargo-target": 1 } }
    }
    assert.strictEqual(ok(Matrix.replay([s, reordered])).get("m"), reordered)
  })

  it("fails closed on any invalid snapshot, even one later superseded", () => {
    const s = created("m")
    const broken = { ...ok(Matrix.start(s)).snapshot, lifecycle: "succeeded" as const }
    const fixed = { ...ok(Matrix.start(s)).snapshot, revision: 5 }
    assert.strictEqual(
      errorOf(Matrix.replay([s, broken, fixed])),
      "a succeeded matrix needs every task verified and every cleanup confirmed"
    )
  })

  it("replays incrementally with replayStep exactly as replay does, leaving the prior state usable on failure", () => {
    const a = created("a")
    const b = created("b")
    const a1 = ok(Matrix.start(a)).snapshot
    let state = Matrix.emptyReplay
    for (const s of [b, a, a1]) state = ok(Matrix.replayStep(state, s))
    assert.deepStrictEqual([...Matrix.replayResult(state)], [...ok(Matrix.replay([b, a, a1]))])
    assert.strictEqual(errorOf(Matrix.replayStep(state, a)), "matrix revision did not advance")
    assert.strictEqual(Matrix.replayResult(state).get("a"), a1)
  })

  it("accepts a snapshot whose revision skipped ahead", () => {
    const s = created("m")
    const ahead = { ...ok(Matrix.start(s)).snapshot, revision: 40 }
    assert.strictEqual(ok(Matrix.replay([s, ahead])).get("m"), ahead)
  })
})

describe("Matrix snapshot encoding", () => {
  it("writes the snapshot fields in order with a null generation, and decodes them back", () => {
    const s = running(fixtureSpec)
    const json = encodeMatrixSnapshotJson(s)
    assert.isTrue(json.startsWith(`{"spec":{"id":"workspace-checks","tasks":[{"id":"repair",`))
    assert.isTrue(
      json.endsWith(
        `"lifecycle":"running","tasks":[{"id":"repair","status":"queued","attempts":[],"automatic_retries":0},{"id":"ui-checks","status":"queued","attempts":[],"automatic_retries":0}],"generation":null,"revision":1}`
      )
    )
    assert.strictEqual(`{${encodeMatrixSnapshotFields(s)}}`, json)
    assert.deepStrictEqual(ok(Matrix.decodeSnapshot(JSON.parse(json))), s)
  })

  it("reports shape errors and invariant violations of untrusted payloads as MatrixError", () => {
    assert.match(errorOf(Matrix.decodeSnapshot({ spec: {} })), /^invalid matrix snapshot: /)
    const bad = JSON.parse(encodeMatrixSnapshotJson({ ...running(fixtureSpec), lifecycle: "succeeded" }))
    assert.strictEqual(
      errorOf(Matrix.decodeSnapshot(bad)),
      "a succeeded matrix needs every task verified and every cleanup confirmed"
    )
  })

  const equivalent = Schema.toEquivalence(MatrixSnapshot)

  it.prop("round-trips any snapshot through canonical JSON", [MatrixSnapshot], ([s]) => {
    const decoded = Schema.decodeUnknownSync(MatrixSnapshot)(JSON.parse(encodeMatrixSnapshotJson(s)))
    assert.isTrue(equivalent(decoded, s))
  }, { arbitrary: { runs: 30 } })

  it.prop("validates arbitrary snapshots without throwing", [MatrixSnapshot], ([s]) => {
    const result = Matrix.fromSnapshot(s)
    assert.isTrue(Result.isSuccess(result) ? result.success === s : result.failure._tag === "MatrixError")
  }, { arbitrary: { runs: 30 } })
})
