/**
 * EventLog under injected I/O faults (docs/testing.md): every system call of an append + flush
 * workload fails in turn, once (a transient error the caller retries) or from then on followed
 * by a simulated power loss (the process "dies"); writes are torn at every byte; and every call
 * of a recovering open fails in turn. Whatever the instant: the error is a typed value, nothing
 * durable is lost, nothing is duplicated, and the reopened session is consistent.
 */
import { assert, describe, it } from "@effect/vitest"
import type { ThreadEvent } from "@logbook/domain"
import { encodeLine } from "@logbook/domain"
import { Deferred, Effect, Fiber, Layer, References, Result } from "effect"
import * as fs from "node:fs"
import type { Fault, FaultCode } from "../../src/fs/SessionFs.ts"
import { FaultController, SessionFs } from "../../src/fs/SessionFs.ts"
import type { SessionLog } from "../../src/log/EventLog.ts"
import { SessionRegistry } from "../../src/log/SessionRegistry.ts"
import { appendAll, copyDir, ev, faultyLayer, openLog, pathsOf, testRoot, turn } from "../fixtures/eventlogHelpers.ts"
import { assertDiskConsistent, decodedEvents } from "../fixtures/eventlogOracle.ts"

const seedTurn = turn("durable")

/** A closed turn (a barrier inside append), then an open turn made durable by `flush`. */
const workload: ReadonlyArray<ThreadEvent> = [
  ev.turnStarted(),
  ev.msg("w1"),
  ev.msg("w2"),
  ev.completed(),
  ev.turnStarted(),
  ev.msg("w3")
]
const BARRIER_AT = 3
const codes: ReadonlyArray<FaultCode> = ["EIO", "ENOSPC", "EACCES"]

/** Fault-layer warnings from finalizers of "dead" sessions are expected; keep the output quiet. */
const quiet = Layer.succeed(References.MinimumLogLevel, "Error")
const layer = () => Layer.merge(faultyLayer(), quiet)

interface Outcome {
  /** Index into `workload` up to which (exclusive) a successful barrier acknowledged events. */
  readonly acked: number
  readonly failures: number
  readonly codesSeen: ReadonlyArray<string>
}

/** Runs the workload, collecting typed failures; a defect fails the test. */
const runWorkload = (log: SessionLog) =>
  Effect.gen(function*() {
    let acked = 0
    let failures = 0
    const codesSeen: Array<string> = []
    for (let i = 0; i < workload.length; i++) {
      const event = workload[i] ?? ev.msg("?")
      const r = yield* Effect.result(log.append(event))
      if (Result.isFailure(r)) {
        failures++
        assert.strictEqual(r.failure._tag, "StoreIoError", `append ${i}: ${r.failure.message}`)
        if (r.failure._tag === "StoreIoError") codesSeen.push(r.failure.code)
      } else if (i === BARRIER_AT) {
        acked = BARRIER_AT + 1
      }
    }
    const f = yield* Effect.result(log.flush)
    if (Result.isFailure(f)) {
      failures++
      codesSeen.push(f.failure.code)
    } else {
      acked = workload.length
    }
    return { acked, failures, codesSeen } satisfies Outcome
  })

/** Reopens `id` without faults and returns the decoded events after checking consistency. */
const reopenAndCheck = (root: string, id: string, label: string) =>
  Effect.gen(function*() {
    yield* Effect.scoped(openLog(root, id))
    return decodedEvents(assertDiskConsistent(pathsOf(root, id), label))
  })

/** Asserts `events` = seed + a prefix of the workload at least `acked` long. */
const assertDurablePrefix = (events: ReadonlyArray<ThreadEvent>, acked: number, label: string) => {
  const full = [...seedTurn, ...workload]
  assert.isAtLeast(events.length, seedTurn.length + acked, `${label}: acknowledged events survive`)
  assert.deepStrictEqual(events, full.slice(0, events.length), `${label}: an in-order prefix, no duplicates`)
}

/**
 * Makes session `id` a copy of session `template` (cheaper than writing it again through the API:
 * no barriers, no fsyncs); the copy opens through the fast path.
 */
const cloneSession = (root: string, template: string, id: string) =>
  copyDir(pathsOf(root, template).dir, pathsOf(root, id).dir)

/** Writes the template session holding `seedTurn`, closed. */
const seedTemplate = (root: string) =>
  Effect.scoped(Effect.gen(function*() {
    yield* appendAll(yield* openLog(root, "template"), seedTurn)
  }))

/**
 * The operations of one clean workload run, in call order (its length bounds the injection
 * loops).
 */
/**
 * Opens a cloned session and finishes its fast-path open (the turn index is loaded on first
 * use), so the faults below land on the calls of append+flush, not on that one-time load.
 */
const openReady = (root: string, id: string) => Effect.tap(openLog(root, id), (log) => log.turnIndex)

const cleanTrace = (root: string) =>
  Effect.gen(function*() {
    const faults = yield* FaultController
    return yield* Effect.scoped(Effect.gen(function*() {
      const log = yield* openLog(root, "clean")
      yield* appendAll(log, seedTurn)
      yield* faults.reset
      const outcome = yield* runWorkload(log)
      assert.strictEqual(outcome.failures, 0)
      return yield* faults.trace
    }))
  })

describe("EventLog under injected faults", () => {
  it.effect("a transient failure of any single call of append+flush is a typed error and a retried flush loses nothing", () =>
    Effect.gen(function*() {
      const { root } = yield* testRoot
      const faults = yield* FaultController
      const trace = yield* cleanTrace(root)
      assert.isAbove(trace.length, 20)
      yield* seedTemplate(root)
      for (let call = 0; call < trace.length; call++) {
        const id = `t${call}`
        cloneSession(root, "template", id)
        const code = codes[call % codes.length] ?? "EIO"
        const label = `call ${call} fails with ${code}`
        yield* Effect.scoped(Effect.gen(function*() {
          const log = yield* openReady(root, id)
          yield* faults.reset
          yield* faults.arm({ _tag: "Fail", call, code })
          const outcome = yield* runWorkload(log)
          assert.strictEqual(yield* faults.injected, 1, label)
          // Closing a directory descriptor after its fsync carries no durability meaning, and
          // SessionFs ignores its errors by design; every other failure must reach the caller.
          const dirClose = trace[call] === "close" && trace[call - 1] === "fsync" && trace[call - 2] === "open"
          if (!dirClose) {
            assert.isAtLeast(outcome.failures, 1, `${label} (${trace[call]}): the failure reached the caller`)
            assert.deepStrictEqual([...new Set(outcome.codesSeen)], [code], label)
          }
          yield* faults.reset
          yield* log.flush
        }))
        const events = yield* reopenAndCheck(root, id, label)
        assert.deepStrictEqual(events, [...seedTurn, ...workload], label)
      }
    }).pipe(Effect.provide(layer())))

  it.effect("a process dying at any call of append+flush keeps every acknowledged event and a consistent log", () =>
    Effect.gen(function*() {
      const { root } = yield* testRoot
      const faults = yield* FaultController
      const total = (yield* cleanTrace(root)).length
      yield* seedTemplate(root)
      for (let call = 0; call <= total; call++) {
        const id = `c${call}`
        cloneSession(root, "template", id)
        const label = `death at call ${call}`
        const outcome = yield* Effect.scoped(Effect.gen(function*() {
          const log = yield* openReady(root, id)
          yield* faults.reset
          yield* faults.arm({ _tag: "Fail", call, code: "EIO", persistent: true })
          const outcome = yield* runWorkload(log)
          yield* faults.crash
          return outcome
        }))
        yield* faults.reset
        if (call === total) assert.strictEqual(outcome.acked, workload.length, "the clean run acknowledges all")
        const events = yield* reopenAndCheck(root, id, label)
        assertDurablePrefix(events, outcome.acked, label)
      }
    }).pipe(Effect.provide(layer())))

  it.effect("a write of the log torn anywhere is rolled back and the retried flush writes every line once", () =>
    Effect.gen(function*() {
      const { root } = yield* testRoot
      const faults = yield* FaultController
      const turnBytes = workload.slice(0, BARRIER_AT + 1).map((e) => encodeLine(e) + "\n").join("").length
      yield* seedTemplate(root)
      // Both edges, every byte of the first line, and a spread over the rest of the buffer.
      const firstLine = encodeLine(workload[0] ?? ev.turnStarted()).length + 1
      const points = [
        ...new Set([
          ...Array.from({ length: firstLine + 2 }, (_, i) => i),
          ...Array.from({ length: 16 }, (_, i) => Math.floor(((i + 1) * turnBytes) / 17)),
          turnBytes - 1
        ])
      ]
      for (const keep of points) {
        const id = `tear${keep}`
        cloneSession(root, "template", id)
        const label = `write torn after ${keep} bytes`
        yield* Effect.scoped(Effect.gen(function*() {
          const log = yield* openLog(root, id)
          const size = fs.statSync(log.paths.events).size
          yield* appendAll(log, workload.slice(0, BARRIER_AT))
          yield* faults.reset
          // The first write from here is the log buffer at the turn boundary.
          yield* faults.arm({ _tag: "TearWrite", call: 0, keepBytes: keep, code: "ENOSPC" })
          const error = yield* Effect.flip(log.append(workload[BARRIER_AT] ?? ev.completed()))
          assert.strictEqual(error._tag === "StoreIoError" ? error.code : error._tag, "ENOSPC", label)
          assert.strictEqual(fs.statSync(log.paths.events).size, size, `${label}: rolled back`)
          yield* faults.reset
          yield* appendAll(log, workload.slice(BARRIER_AT + 1))
          yield* log.flush
        }))
        const events = yield* reopenAndCheck(root, id, label)
        assert.deepStrictEqual(events, [...seedTurn, ...workload], label)
      }
    }).pipe(Effect.provide(layer())))

  it.effect("a write that cannot be rolled back poisons the handle with a typed error and reopen repairs", () =>
    Effect.gen(function*() {
      const { root } = yield* testRoot
      const faults = yield* FaultController
      const faultsToArm: ReadonlyArray<Fault> = [
        { _tag: "TearWrite", call: 0, keepBytes: 17, code: "EIO" },
        { _tag: "Fail", call: 0, op: "ftruncate", code: "EIO" }
      ]
      yield* Effect.scoped(Effect.gen(function*() {
        const log = yield* openLog(root, "poisoned")
        yield* appendAll(log, seedTurn)
        yield* faults.reset
        for (const f of faultsToArm) yield* faults.arm(f)
        yield* runWorkload(log)
        yield* faults.reset
        const again = yield* Effect.flip(log.append(ev.msg("refused")))
        assert.strictEqual(again._tag, "StoreIoError")
        assert.strictEqual(again._tag === "StoreIoError" ? again.code : "", "EUNAVAILABLE")
        assert.match(again.message, /reopen/)
        assert.strictEqual((yield* Effect.flip(log.flush)).code, "EUNAVAILABLE")
      }))
      const events = yield* reopenAndCheck(root, "poisoned", "after poisoning")
      assert.deepStrictEqual(events.slice(0, seedTurn.length), [...seedTurn])
      const after = yield* Effect.scoped(Effect.gen(function*() {
        const log = yield* openLog(root, "poisoned")
        yield* appendAll(log, turn("after reopen"))
        const last = (yield* log.turnIndex).at(-1)?.turn_number ?? 0
        return (yield* log.reconstructTurn(last)).events
      }))
      assert.deepStrictEqual(after, turn("after reopen"))
      assertDiskConsistent(pathsOf(root, "poisoned"))
    }).pipe(Effect.provide(layer())))

  it.effect("any single failing call of a recovering open is a typed error and the next open recovers fully", () =>
    Effect.gen(function*() {
      const { root } = yield* testRoot
      const faults = yield* FaultController
      const prepare = (id: string) =>
        Effect.gen(function*() {
          yield* Effect.scoped(Effect.gen(function*() {
            yield* appendAll(yield* openLog(root, id), [...seedTurn, ev.turnStarted(), ev.msg("open")])
          }))
          // Force every recovery step: no manifest (rescan), a torn tail (repair), a stale marker.
          const paths = pathsOf(root, id)
          fs.rmSync(paths.manifest)
          fs.appendFileSync(paths.events, "{\"torn")
          fs.writeFileSync(paths.marker, "{\"previous_file_len\":1,\"new_file_len\":0,\"retained_turn_base\":1}")
        })
      yield* prepare("damaged")
      cloneSession(root, "damaged", "probe")
      yield* faults.reset
      yield* Effect.scoped(openLog(root, "probe"))
      const total = yield* faults.calls
      const expected = [...seedTurn, ev.turnStarted(), ev.msg("open")]
      for (let call = 0; call < total; call++) {
        const id = `o${call}`
        const label = `open with call ${call} failing`
        cloneSession(root, "damaged", id)
        yield* faults.reset
        yield* faults.arm({ _tag: "Fail", call, code: codes[call % codes.length] ?? "EIO" })
        const opened = yield* Effect.result(Effect.scoped(openLog(root, id)))
        if (Result.isFailure(opened)) {
          assert.include(["StoreIoError", "CreateDirError"], opened.failure._tag, label)
        }
        yield* faults.reset
        yield* Effect.scoped(Effect.gen(function*() {
          const log = yield* openLog(root, id)
          assert.strictEqual(log.lockState, "exclusive", `${label}: no lock leaked`)
        }))
        const paths = pathsOf(root, id)
        const after = assertDiskConsistent(paths, label)
        assert.deepStrictEqual(decodedEvents(after), expected, label)
        assert.strictEqual(after.malformed, 1, `${label}: the torn fragment is one line`)
        assert.isFalse(fs.existsSync(paths.marker), `${label}: marker removed`)
      }
    }).pipe(Effect.provide(layer())))

  it.effect("interrupting a flush after its write has reached the file never writes those bytes twice", () =>
    Effect.gen(function*() {
      const { root } = yield* testRoot
      const wrote = yield* Deferred.make<void>()
      const gate = yield* Deferred.make<void>()
      let armed = false
      // A file system whose next append-file write pauses, interruptibly, once its bytes are on disk
      // (where the runtime may also yield on its own after any operation).
      const pausing = Layer.effect(
        SessionFs,
        Effect.gen(function*() {
          const real = yield* SessionFs
          return SessionFs.of({
            ...real,
            openAppend: (p) =>
              Effect.map(real.openAppend(p), (file) => ({
                ...file,
                write: (bytes: Uint8Array) =>
                  file.write(bytes).pipe(
                    Effect.andThen(Effect.suspend(() => {
                      if (!armed) return Effect.void
                      armed = false
                      return Deferred.succeed(wrote, undefined).pipe(Effect.andThen(Deferred.await(gate)))
                    }))
                  )
              }))
          })
        })
      ).pipe(Layer.provide(SessionFs.layerNode))
      const layer = Layer.provideMerge(Layer.fresh(SessionRegistry.layer), pausing)
      yield* Effect.scoped(Effect.gen(function*() {
        const log = yield* openLog(root, "interrupted")
        yield* appendAll(log, [ev.turnStarted(), ev.msg("once")])
        armed = true
        const flushing = yield* Effect.forkChild(log.flush)
        yield* Deferred.await(wrote)
        const interrupting = yield* Effect.forkChild(Fiber.interrupt(flushing))
        yield* Effect.yieldNow
        yield* Deferred.succeed(gate, undefined)
        yield* Fiber.join(interrupting)
        yield* log.append(ev.completed())
      })).pipe(Effect.provide(layer))
      const after = assertDiskConsistent(pathsOf(root, "interrupted"))
      assert.deepStrictEqual(decodedEvents(after), [ev.turnStarted(), ev.msg("once"), ev.completed()])
    }))
})
