/**
 * Property: any sequence of matrix commands, valid or not, applied to a valid snapshot
 * (the reference fixture's spec or a generated spec) yields after every step either a
 * snapshot that `fromSnapshot` accepts, one revision later, or a MatrixError with the input
 * untouched; the recorded history always replays to the last snapshot.
 */
import { assert, describe, it } from "@effect/vitest"
import { Arbitrary, Result, Schema } from "effect"
import { MatrixOutcome } from "../../src/contract/MatrixSnapshot.ts"
import type { MatrixAttempt, MatrixCommandEvidence, MatrixSnapshot } from "../../src/contract/MatrixSnapshot.ts"
import { MATRIX_U32_MAX } from "../../src/contract/MatrixSpec.ts"
import type { MatrixSpec, MatrixTaskSpec } from "../../src/contract/MatrixSpec.ts"
import * as Matrix from "../../src/matrix/Matrix.ts"
import { MatrixError } from "../../src/matrix/MatrixError.ts"
import { deepFreeze, evidenceFor, fixtureSpec, ok, task } from "./MatrixTestkit.ts"

const between = (minimum: number, maximum: number) => Schema.Int.check(Schema.isBetween({ minimum, maximum }))
const Pick = between(0, 15)
const Generation = Schema.Literals(["g1", "g2", " "])

const Report = Schema.TaggedStruct("report", {
  pick: Pick,
  outcome: MatrixOutcome,
  cleanup: Schema.Boolean,
  ownWorker: Schema.Boolean,
  evidence: Schema.Literals(["valid", "none", "cancelled", "failed", "duplicate", "foreign"])
})

/** Commands over a snapshot; attempts and tasks are chosen by index modulo what exists. */
const Command = Schema.Union([
  Schema.TaggedStruct("start", {}),
  Schema.TaggedStruct("pause", {}),
  Schema.TaggedStruct("resume", {}),
  Schema.TaggedStruct("cancel", {}),
  Schema.TaggedStruct("reserve", { cap: between(-1, 7), reuseIds: Schema.Boolean }),
  Schema.TaggedStruct("launch", { pick: Pick }),
  Schema.TaggedStruct("rollback", { pick: Pick }),
  Report,
  Schema.TaggedStruct("confirm", { pick: Pick, ownWorker: Schema.Boolean }),
  Schema.TaggedStruct("begin", { generation: Generation }),
  Schema.TaggedStruct("finalize", { generation: Generation }),
  Schema.TaggedStruct("invalidate", { generation: Generation }),
  Schema.TaggedStruct("retry", { pick: Pick }),
  Schema.TaggedStruct("recover", {}),
  Schema.TaggedStruct("settle", {})
])
type Command = typeof Command.Type

/** Active attempts first (the ones most commands act on), then finished last attempts, then older ones. */
const attemptsOf = (s: MatrixSnapshot): ReadonlyArray<MatrixAttempt> => {
  const last = s.tasks.flatMap((t) => t.attempts.slice(-1))
  const older = s.tasks.flatMap((t) => t.attempts.slice(0, -1))
  return [...last.filter((a) => !a.cleanup_confirmed), ...last.filter((a) => a.cleanup_confirmed), ...older]
}

const pickAttempt = (s: MatrixSnapshot, pick: number): MatrixAttempt | undefined => {
  const all = attemptsOf(s)
  return all.length === 0 ? undefined : all[pick % all.length]
}

const evidenceOf = (
  s: MatrixSnapshot,
  attempt: MatrixAttempt,
  kind: "valid" | "none" | "cancelled" | "failed" | "duplicate" | "foreign"
): ReadonlyArray<MatrixCommandEvidence> => {
  const checks = s.spec.tasks.find((t) => t.id === taskOf(s, attempt))?.checks ?? []
  const good = evidenceFor(checks, attempt)
  switch (kind) {
    case "valid":
      return good
    case "none":
      return []
    case "cancelled":
      return good.map((e) => ({ ...e, cancelled: true }))
    case "failed":
      return good.map((e) => ({ ...e, exit_code: 2 }))
    case "duplicate":
      return good.map((e) => ({ ...e, event_id: "dup" })).concat(
        good.slice(0, 1).map((e) => ({ ...e, event_id: "dup" }))
      )
    case "foreign":
      return good.map((e) => ({ ...e, worker_id: `${e.worker_id}-other` }))
  }
}

const taskOf = (s: MatrixSnapshot, attempt: MatrixAttempt): string =>
  s.tasks.find((t) => t.attempts.includes(attempt))?.id ?? ""

let serial = 0
const freshIds: Matrix.IdGenerator = { attemptId: () => `att-${++serial}`, workerId: () => `wkr-${serial}` }
const reusedIds: Matrix.IdGenerator = { attemptId: () => "att-reused", workerId: () => "wkr-reused" }

const apply = (s: MatrixSnapshot, command: Step): Result.Result<{ readonly snapshot: MatrixSnapshot }, MatrixError> => {
  switch (command._tag) {
    case "start":
      return Matrix.start(s)
    case "pause":
      return Matrix.pause(s)
    case "resume":
      return Matrix.resume(s)
    case "cancel":
      return Matrix.cancel(s)
    case "recover":
      return Matrix.recover(s)
    case "reserve":
      return Matrix.reserveReady(s, command.cap, command.reuseIds ? reusedIds : freshIds)
    case "begin":
      return Matrix.beginVerification(s, command.generation)
    case "finalize":
      return Matrix.finalizeVerification(
        s,
        s.generation !== null && command.generation === "g1" ? s.generation : command.generation
      )
    case "invalidate":
      return Matrix.invalidateVerification(s, command.generation)
    case "retry":
      return Matrix.retry(s, s.tasks[command.pick % s.tasks.length]?.id ?? "none")
    case "launch":
      return Matrix.markLaunchRequested(s, pickAttempt(s, command.pick)?.id ?? "none")
    case "rollback":
      return Matrix.rollbackLaunch(s, pickAttempt(s, command.pick)?.id ?? "none")
    case "confirm": {
      const attempt = pickAttempt(s, command.pick)
      if (attempt === undefined) return Matrix.confirmCleanup(s, "none", "none")
      return Matrix.confirmCleanup(s, attempt.id, command.ownWorker ? attempt.worker_id : "intruder")
    }
    case "report": {
      const attempt = pickAttempt(s, command.pick)
      if (attempt === undefined) {
        return Matrix.report(s, {
          attemptId: "none",
          workerId: "none",
          outcome: "success",
          evidence: [],
          cleanupConfirmed: true
        })
      }
      return Matrix.report(s, {
        attemptId: attempt.id,
        workerId: command.ownWorker ? attempt.worker_id : "intruder",
        outcome: command.outcome,
        evidence: evidenceOf(s, attempt, command.evidence),
        cleanupConfirmed: command.cleanup
      })
    }
  }
}

type Step = Exclude<Command, { readonly _tag: "settle" }>

/** Drives a matrix forward: admit, report success on every active attempt, then try to verify and finish. */
const settle: ReadonlyArray<Step> = [
  { _tag: "reserve", cap: 5, reuseIds: false },
  ...Array.from({ length: 5 }, (): Step => ({
    _tag: "report",
    pick: 0,
    outcome: "success",
    cleanup: true,
    ownWorker: true,
    evidence: "valid"
  })),
  { _tag: "begin", generation: "g1" },
  { _tag: "finalize", generation: "g1" }
]

/**
 * Applies every command (`settle` expands to the steps above), checking the property after
 * each step, then replays the history; returns the lifecycles seen.
 */
const run = (spec: MatrixSpec, commands: ReadonlyArray<Command>): Set<string> => {
  let s = deepFreeze(ok(Matrix.create(spec)).snapshot)
  const history: Array<MatrixSnapshot> = [s]
  const seen = new Set<string>([s.lifecycle])
  const expanded = commands.flatMap((command) => command._tag === "settle" ? settle : [command])
  for (const command of expanded) {
    const before = JSON.stringify(s)
    const result = apply(s, command)
    assert.strictEqual(JSON.stringify(s), before, `${command._tag} modified its input`)
    if (Result.isFailure(result)) {
      assert.instanceOf(result.failure, MatrixError)
      continue
    }
    const next = deepFreeze(result.success.snapshot)
    if (next === s) continue
    assert.strictEqual(next.revision, s.revision + 1, command._tag)
    assert.strictEqual(next.spec, s.spec)
    const checked = Matrix.fromSnapshot(next)
    if (Result.isFailure(checked)) {
      assert.fail(`${command._tag} produced an invalid snapshot: ${checked.failure.message}`)
    }
    s = next
    history.push(s)
    seen.add(s.lifecycle)
  }
  assert.strictEqual(ok(Matrix.replay(history)).get(spec.id), s)
  return seen
}

const taskSpecs = Arbitrary.flatMap(
  Arbitrary.all({
    count: Arbitrary.schema(between(1, 6)),
    pools: Arbitrary.schema(between(0, 2)),
    huge: Arbitrary.schema(Schema.Boolean)
  }),
  ({ count, huge, pools }) => {
    const capacity = (i: number) => huge ? MATRIX_U32_MAX : i + 1
    const resources = Object.fromEntries(Array.from({ length: pools }, (_, i) => [`pool${i}`, capacity(i)]))
    const oneTask = (i: number) =>
      Arbitrary.map(
        Arbitrary.all({
          write: Arbitrary.schema(between(0, 3)),
          replaySafe: Arbitrary.schema(Schema.Boolean),
          deps: Arbitrary.schema(between(0, 63)),
          needs: Arbitrary.schema(between(0, 3)),
          checks: Arbitrary.schema(between(1, 2))
        }),
        ({ checks, deps, needs, replaySafe, write }): MatrixTaskSpec =>
          task(`t${i}`, {
            access: write === 0 ? "write" : "read",
            replay_safe: replaySafe,
            dependencies: Array.from({ length: i }, (_, j) => j).filter((j) => (deps >> j) & 1).map((j) => `t${j}`),
            resources: Object.fromEntries(
              Array.from({ length: pools }, (_, p) => p).filter((p) => (needs >> p) & 1).map((
                p
              ) => [`pool${p}`, capacity(p)])
            ),
            checks: Array.from({ length: checks }, (_, c) => `check ${i}.${c}`)
          })
      )
    return Arbitrary.map(
      Arbitrary.all(Array.from({ length: count }, (_, i) => oneTask(i))),
      (tasks): MatrixSpec => ({ id: "generated", tasks, resources })
    )
  }
)

const constant = (command: Command) => Arbitrary.Constant(command)
const picked = (f: (pick: number) => Command) => Arbitrary.map(Arbitrary.schema(Pick), f)

/**
 * Commands weighted towards progress (reserve, launch, successful reports, verification),
 * with every command and every kind of bad input still drawn regularly.
 */
const weighted: ReadonlyArray<readonly [number, Arbitrary.Arbitrary<Command>]> = [
  [2, constant({ _tag: "start" })],
  [3, constant({ _tag: "pause" })],
  [4, constant({ _tag: "resume" })],
  [1, constant({ _tag: "cancel" })],
  [3, constant({ _tag: "recover" })],
  [4, Arbitrary.schema(Command)],
  [12, Arbitrary.map(Arbitrary.schema(between(1, 5)), (cap): Command => ({ _tag: "reserve", cap, reuseIds: false }))],
  [8, picked((pick) => ({ _tag: "launch", pick }))],
  [3, picked((pick) => ({ _tag: "rollback", pick }))],
  [8, Arbitrary.schema(Report)],
  [
    16,
    picked((pick) => ({ _tag: "report", pick, outcome: "success", cleanup: true, ownWorker: true, evidence: "valid" }))
  ],
  [6, picked((pick) => ({ _tag: "confirm", pick, ownWorker: true }))],
  [6, constant({ _tag: "begin", generation: "g1" })],
  [6, constant({ _tag: "finalize", generation: "g1" })],
  [3, constant({ _tag: "invalidate", generation: "g2" })],
  [6, picked((pick) => ({ _tag: "retry", pick }))],
  [8, constant({ _tag: "settle" })]
]
const totalWeight = weighted.reduce((sum, [w]) => sum + w, 0)

// Literals are drawn uniformly; bounded integers favour their edges, which would skew the weights.
const rolls = Schema.Literals(Array.from({ length: totalWeight }, (_, i) => i))

const command = Arbitrary.flatMap(Arbitrary.schema(rolls), (roll) => {
  let left = roll
  for (const [w, arbitrary] of weighted) {
    if (left < w) return arbitrary
    left -= w
  }
  return Arbitrary.schema(Command)
})

const commands = Arbitrary.array(command, { minLength: 10, maxLength: 50 })

describe("Matrix command sequences", () => {
  it.prop("keep the fixture matrix valid or fail without effect", { commands }, ({ commands }) => {
    run(fixtureSpec, [{ _tag: "start" }, ...commands])
  }, { arbitrary: { runs: 100, size: 50 } })

  it.prop(
    "keep generated matrices valid or fail without effect",
    { spec: taskSpecs, commands },
    ({ commands, spec }) => {
      ok(Matrix.validateSpec(spec))
      run(spec, [{ _tag: "start" }, ...commands])
    },
    { arbitrary: { runs: 100, size: 50 } }
  )

  it("reach every lifecycle across a fixed sample of command sequences", () => {
    const seen = new Set<string>()
    const happy: ReadonlyArray<Command> = [
      { _tag: "start" },
      { _tag: "pause" },
      { _tag: "resume" },
      ...Array.from({ length: 2 }, (): ReadonlyArray<Command> => [
        { _tag: "reserve", cap: 3, reuseIds: false },
        { _tag: "launch", pick: 0 },
        { _tag: "report", pick: 0, outcome: "success", cleanup: true, ownWorker: true, evidence: "valid" }
      ]).flat(),
      { _tag: "begin", generation: "g1" },
      ...Array.from({ length: 2 }, (): ReadonlyArray<Command> => [
        { _tag: "reserve", cap: 3, reuseIds: false },
        { _tag: "report", pick: 0, outcome: "success", cleanup: true, ownWorker: true, evidence: "valid" }
      ]).flat(),
      { _tag: "finalize", generation: "g1" }
    ]
    for (const lifecycle of run(fixtureSpec, happy)) seen.add(lifecycle)
    const blocked: ReadonlyArray<Command> = [
      { _tag: "start" },
      { _tag: "reserve", cap: 3, reuseIds: false },
      { _tag: "launch", pick: 0 },
      { _tag: "recover" },
      { _tag: "confirm", pick: 0, ownWorker: true },
      { _tag: "pause" },
      { _tag: "cancel" }
    ]
    for (const lifecycle of run(fixtureSpec, blocked)) seen.add(lifecycle)
    assert.deepStrictEqual([...seen].sort(), [
      "blocked",
      "cancelled",
      "created",
      "paused",
      "running",
      "succeeded",
      "verifying"
    ])
  })
})
