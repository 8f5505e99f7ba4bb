import { assert, describe, it } from "@effect/vitest"
import type { MatrixSnapshot, MatrixSpec, MatrixTaskSpec } from "@logbook/domain"
import { decodeLineText, encodeLine } from "@logbook/domain"
import type { SessionLog } from "@logbook/store"
import { EventLog, FaultController, IdGenerator, sequentialIds, SessionFs, SessionRegistry } from "@logbook/store"
import { matrixSpec, matrixTask, tempWorkspace as testkitWorkspace } from "@logbook/testkit"
import { Effect, Layer, Option, Result } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { makeMatrixCoordinator } from "../src/MatrixCoordinator.ts"

const nodeLayer = Layer.provideMerge(SessionRegistry.layer, SessionFs.layerNode)
const faultyLayer = () => Layer.provideMerge(SessionRegistry.layer, SessionFs.layerFaulty())

/** A workspace root (with `src/`) holding the sessions root; removed when the test ends. */
const tempWorkspace = () => testkitWorkspace("matrix-coord", { dirs: ["src"] })

/** A valid read task working in `src/`. */
const task = (id: string, overrides: Partial<MatrixTaskSpec> = {}): MatrixTaskSpec =>
  matrixTask(id, { workspace: "src", ...overrides })

const spec: MatrixSpec = matrixSpec([task("build"), task("lint"), task("test", { dependencies: ["build"] })], {
  id: "build-matrix"
})

const open = (sessions: string) => EventLog.open({ sessionsDir: sessions, sessionId: "s" })

const eventsFile = (sessions: string) => path.join(sessions, "s", "events.jsonl")

/** The matrix snapshots in `events.jsonl` as another process would read them right now. */
const snapshotsOnDisk = (sessions: string): ReadonlyArray<MatrixSnapshot> =>
  fs.readFileSync(eventsFile(sessions), "utf8").split("\n").flatMap((line) => {
    const decoded = line.length === 0 ? undefined : decodeLineText(line)
    if (decoded === undefined || Result.isFailure(decoded)) return []
    const event = decoded.success.event
    if (event.type !== "matrix.updated") return []
    const { type: _type, ...snapshot } = event
    return [snapshot]
  })

const lastOnDisk = (sessions: string): MatrixSnapshot | undefined => snapshotsOnDisk(sessions).at(-1)

const fileSize = (sessions: string): number => fs.statSync(eventsFile(sessions)).size

describe("MatrixCoordinator", () => {
  it.effect("every mutation is synced to events.jsonl before it returns, surviving a crash right after", () =>
    Effect.gen(function*() {
      const { root, sessions } = yield* tempWorkspace()
      const faults = yield* FaultController
      const log = yield* open(sessions)
      const matrix = yield* makeMatrixCoordinator(log)
      /** Runs a mutation, then cuts power: only what was synced stays in the file. */
      const durable = <A>(mutation: Effect.Effect<A, unknown>, snapshotOf: (a: A) => MatrixSnapshot) =>
        Effect.gen(function*() {
          const value = yield* mutation
          yield* faults.crash
          assert.deepStrictEqual(lastOnDisk(sessions), snapshotOf(value))
          yield* faults.reset
          return value
        })
      const self = (s: MatrixSnapshot) => s
      const created = yield* durable(matrix.create(spec, root), self)
      assert.strictEqual(created.revision, 0)
      yield* durable(matrix.start(spec.id), self)
      const reservation = yield* durable(matrix.reserveReady(spec.id), (r) => r.snapshot)
      assert.deepStrictEqual(reservation.assignments.map((a) => a.task_id), ["build", "lint"])
      const [build, lint] = reservation.assignments
      if (build === undefined || lint === undefined) return assert.fail("two assignments expected")
      yield* durable(matrix.markLaunchRequested(spec.id, build.attempt_id), self)
      yield* durable(matrix.rollbackLaunch(spec.id, lint.attempt_id), self)
      const reported = yield* durable(
        matrix.report(spec.id, {
          attemptId: build.attempt_id,
          workerId: build.worker_id,
          outcome: "success",
          evidence: [],
          cleanupConfirmed: true
        }),
        self
      )
      assert.strictEqual(reported.tasks[0]?.status, "executed")
      const paused = yield* durable(matrix.pause(spec.id), self)
      assert.strictEqual(paused.revision, 6)
      assert.deepStrictEqual(snapshotsOnDisk(sessions).map((s) => s.revision), [0, 1, 2, 3, 4, 5, 6])
      assert.deepStrictEqual(yield* matrix.current(spec.id), Option.some(paused))
    }).pipe(Effect.provide(faultyLayer()), Effect.provideService(IdGenerator, sequentialIds())))

  it.effect("a rejected mutation appends nothing and leaves the state as it was", () =>
    Effect.gen(function*() {
      const { root, sessions } = yield* tempWorkspace()
      const log = yield* open(sessions)
      const matrix = yield* makeMatrixCoordinator(log)
      const started = yield* Effect.andThen(matrix.create(spec, root), matrix.start(spec.id))
      yield* log.flush
      const size = fileSize(sessions)
      const rejections = [
        matrix.start(spec.id),
        matrix.resume(spec.id),
        matrix.report(spec.id, {
          attemptId: "forged",
          workerId: "w",
          outcome: "success",
          evidence: [],
          cleanupConfirmed: true
        }),
        matrix.start("no-such-matrix"),
        matrix.create(spec, root),
        matrix.create({ ...spec, id: "other", tasks: [task("x", { workspace: "missing" })] }, root),
        matrix.create({ ...spec, id: "" }, root)
      ]
      const messages: Array<string> = []
      for (const rejected of rejections) {
        const error = yield* Effect.flip(rejected)
        assert.strictEqual(error._tag, "MatrixError")
        messages.push(error.message)
      }
      assert.deepStrictEqual(messages, [
        "only a created matrix can start",
        "only a paused matrix can resume",
        "stale or unknown report attempt",
        `unknown matrix "no-such-matrix"`,
        `matrix "build-matrix" already exists`,
        `task "x" workspace "missing" does not exist (ENOENT)`,
        "matrix needs an ID and tasks"
      ])
      yield* log.flush
      assert.strictEqual(fileSize(sessions), size)
      assert.deepStrictEqual(yield* matrix.snapshots, new Map([[spec.id, started]]))
    }).pipe(Effect.provide(nodeLayer)))

  it.effect("reserveReady takes ids from the IdGenerator and appends nothing when nothing is admitted", () =>
    Effect.gen(function*() {
      const { root, sessions } = yield* tempWorkspace()
      const log = yield* open(sessions)
      const matrix = yield* makeMatrixCoordinator(log, { maxConcurrent: 1 })
      yield* matrix.create(spec, root)
      const idle = yield* matrix.reserveReady(spec.id)
      assert.deepStrictEqual(idle.assignments, [])
      assert.strictEqual(idle.snapshot.revision, 0)
      yield* matrix.start(spec.id)
      const one = yield* matrix.reserveReady(spec.id)
      const expected = sequentialIds()
      assert.deepStrictEqual(one.assignments.map((a) => [a.task_id, a.attempt_id, a.worker_id]), [[
        "build",
        expected.uuid(),
        expected.uuid()
      ]])
      const full = yield* matrix.reserveReady(spec.id)
      assert.deepStrictEqual(full.assignments, [])
      assert.strictEqual(full.snapshot, one.snapshot)
      assert.deepStrictEqual(snapshotsOnDisk(sessions).map((s) => s.revision), [0, 1, 2])
    }).pipe(Effect.provide(nodeLayer), Effect.provideService(IdGenerator, sequentialIds())))

  it.effect("recover after a crash fails closed: a launched attempt blocks, an unlaunched one rolls back", () =>
    Effect.gen(function*() {
      const { root, sessions } = yield* tempWorkspace()
      // First life: two attempts reserved, one launched, then the process dies without reports.
      yield* Effect.scoped(Effect.gen(function*() {
        const matrix = yield* makeMatrixCoordinator(yield* open(sessions))
        yield* Effect.andThen(matrix.create(spec, root), matrix.start(spec.id))
        const { assignments } = yield* matrix.reserveReady(spec.id)
        const build = assignments[0]
        if (build === undefined) return assert.fail("nothing reserved")
        yield* matrix.markLaunchRequested(spec.id, build.attempt_id)
      }))
      // Second life: the replayed state still holds both reservations until recover.
      const recovered = yield* Effect.scoped(Effect.gen(function*() {
        const matrix = yield* makeMatrixCoordinator(yield* open(sessions))
        const before = Option.getOrThrow(yield* matrix.current(spec.id))
        assert.deepStrictEqual(before.tasks.map((t) => t.status), ["assigned", "assigned", "queued"])
        const after = yield* matrix.recover(spec.id)
        assert.strictEqual(after.lifecycle, "blocked")
        assert.deepStrictEqual(after.tasks.map((t) => t.status), ["cleanup_uncertain", "queued", "queued"])
        const admitted = yield* matrix.reserveReady(spec.id)
        assert.deepStrictEqual(admitted.assignments, [])
        const error = yield* Effect.flip(matrix.retry(spec.id, "build"))
        assert.strictEqual(error.message, "tasks cannot be retried while work is active")
        return after
      }))
      // Third life: the blocked state was persisted by recover itself.
      yield* Effect.scoped(Effect.gen(function*() {
        const log = yield* open(sessions)
        const matrix = yield* makeMatrixCoordinator(log)
        assert.deepStrictEqual(yield* matrix.current(spec.id), Option.some(recovered))
        const count = snapshotsOnDisk(sessions).length
        assert.deepStrictEqual(yield* matrix.recover(spec.id), recovered)
        yield* log.flush
        assert.strictEqual(snapshotsOnDisk(sessions).length, count, "a no-op recover appends nothing")
      }))
      assert.strictEqual(lastOnDisk(sessions)?.revision, recovered.revision)
    }).pipe(Effect.provide(nodeLayer)))

  it.effect("after a failed sync the coordinator re-reads the log instead of trusting its memory", () =>
    Effect.gen(function*() {
      const { root, sessions } = yield* tempWorkspace()
      const faults = yield* FaultController
      const log = yield* open(sessions)
      const matrix = yield* makeMatrixCoordinator(log)
      yield* matrix.create(spec, root)
      yield* faults.reset
      yield* faults.arm({ _tag: "Fail", call: 0, code: "EIO", op: "fdatasync" })
      const failed = yield* Effect.flip(matrix.start(spec.id))
      assert.strictEqual(failed._tag, "StoreIoError")
      // The bytes reached the file before the sync failed: the log, not memory, says running.
      const current = Option.getOrThrow(yield* matrix.current(spec.id))
      assert.strictEqual(current.lifecycle, "running")
      assert.strictEqual(current.revision, 1)
      const paused = yield* matrix.pause(spec.id)
      assert.strictEqual(paused.revision, 2)
      assert.deepStrictEqual(lastOnDisk(sessions), paused)
    }).pipe(Effect.provide(faultyLayer())))

  it.effect("while the disk keeps failing every call fails, and the state returns once it recovers", () =>
    Effect.gen(function*() {
      const { root, sessions } = yield* tempWorkspace()
      const faults = yield* FaultController
      const log = yield* open(sessions)
      const matrix = yield* makeMatrixCoordinator(log)
      const created = yield* matrix.create(spec, root)
      yield* faults.reset
      yield* faults.arm({ _tag: "Fail", call: 0, code: "ENOSPC", op: "write", persistent: true })
      assert.strictEqual((yield* Effect.flip(matrix.start(spec.id)))._tag, "StoreIoError")
      assert.strictEqual((yield* Effect.flip(matrix.current(spec.id)))._tag, "StoreIoError")
      assert.strictEqual((yield* Effect.flip(matrix.pause(spec.id)))._tag, "StoreIoError")
      assert.deepStrictEqual(lastOnDisk(sessions), created)
      yield* faults.reset
      // The start event stayed buffered; once writes work the replay flushes and sees it.
      const current = Option.getOrThrow(yield* matrix.current(spec.id))
      assert.strictEqual(current.lifecycle, "running")
      assert.deepStrictEqual(lastOnDisk(sessions), current)
    }).pipe(Effect.provide(faultyLayer())))

  it.effect("an invalid history closes every matrix operation but leaves the session usable", () =>
    Effect.gen(function*() {
      const { root, sessions } = yield* tempWorkspace()
      const first = yield* Effect.scoped(Effect.gen(function*() {
        const matrix = yield* makeMatrixCoordinator(yield* open(sessions))
        return yield* matrix.create(spec, root)
      }))
      // A second writer appends a checkpoint whose revision does not advance.
      fs.appendFileSync(eventsFile(sessions), encodeLine({ type: "matrix.updated", ...first }) + "\n")
      yield* Effect.scoped(Effect.gen(function*() {
        const log: SessionLog = yield* open(sessions)
        const matrix = yield* makeMatrixCoordinator(log)
        const reasons = [
          yield* Effect.flip(matrix.snapshots),
          yield* Effect.flip(matrix.start(spec.id)),
          yield* Effect.flip(matrix.create({ ...spec, id: "fresh" }, root))
        ].map((e) => e.message)
        for (const reason of reasons) {
          assert.match(reason, /^matrix checkpoint at byte \d+: matrix revision did not advance$/)
        }
        const size = fileSize(sessions)
        yield* log.append({ type: "thread.started", thread_id: "t" })
        yield* log.flush
        assert.isAbove(fileSize(sessions), size)
      }))
    }).pipe(Effect.provide(nodeLayer)))
})
