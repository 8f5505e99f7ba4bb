/**
 * The liveness lock as EventLog uses it (docs/log.md#liveness-lock, docs/differences.md#ofd-locks): reported `lockState`,
 * sharing within one process, another process holding `session.lock` (a spawned child) with
 * and without `requireExclusive`, and release when the last handle closes.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import { SessionFs } from "../../src/fs/SessionFs.ts"
import {
  appendAll,
  ev,
  killAndWait,
  nodeLayer,
  openLog,
  pathsOf,
  spawnLockHolder,
  testRoot,
  turn
} from "../fixtures/eventlogHelpers.ts"
import { assertDiskConsistent, readDisk } from "../fixtures/eventlogOracle.ts"

describe("EventLog liveness lock", () => {
  it.effect("an open session holds the lock exclusively until its last handle closes", () =>
    Effect.gen(function*() {
      const { root } = yield* testRoot
      const sfs = yield* SessionFs
      const paths = pathsOf(root, "mine")
      yield* Effect.scoped(Effect.gen(function*() {
        const first = yield* openLog(root, "mine")
        assert.strictEqual(first.lockState, "exclusive")
        yield* Effect.scoped(Effect.gen(function*() {
          const second = yield* openLog(root, "mine", { requireExclusive: true })
          assert.strictEqual(second.lockState, "exclusive", "a second handle in this process shares the lock")
        }))
        assert.strictEqual(yield* sfs.probeLock(paths.lock), "held", "closing one handle keeps the lock")
      }))
      assert.strictEqual(yield* sfs.probeLock(paths.lock), "free")
      // Another process can now take it.
      yield* Effect.scoped(spawnLockHolder(paths.lock))
    }).pipe(Effect.provide(nodeLayer())))

  it.effect("with another process holding the lock, open reports held-elsewhere and still works", () =>
    Effect.gen(function*() {
      const { root } = yield* testRoot
      const paths = pathsOf(root, "theirs")
      const holder = yield* spawnLockHolder(paths.lock)
      yield* Effect.scoped(Effect.gen(function*() {
        const log = yield* openLog(root, "theirs")
        assert.strictEqual(log.lockState, "held-elsewhere")
        yield* appendAll(log, turn("written anyway"))
        assertDiskConsistent(paths)
      }))
      yield* killAndWait(holder)
      yield* Effect.scoped(Effect.gen(function*() {
        const log = yield* openLog(root, "theirs", { requireExclusive: true })
        assert.strictEqual(log.lockState, "exclusive", "a dead holder's lock is released by the kernel")
        assert.deepStrictEqual((yield* log.reconstructTurn(1)).events, turn("written anyway"))
      }))
    }).pipe(Effect.provide(nodeLayer())))

  it.effect("requireExclusive fails with SessionLocked while another process holds the lock and touches no data", () =>
    Effect.gen(function*() {
      const { root } = yield* testRoot
      const paths = pathsOf(root, "busy")
      yield* Effect.scoped(Effect.gen(function*() {
        const log = yield* openLog(root, "busy")
        yield* appendAll(log, [...turn("existing"), ev.turnStarted()])
      }))
      const before = readDisk(paths)
      const holder = yield* spawnLockHolder(paths.lock)
      const error = yield* Effect.flip(Effect.scoped(openLog(root, "busy", { requireExclusive: true })))
      assert.strictEqual(error._tag, "SessionLocked")
      assert.include(error.message, paths.lock)
      assert.deepStrictEqual(readDisk(paths), before, "nothing was written")
      // A fresh session is not even created beyond its directories.
      const fresh = pathsOf(root, "fresh")
      const holder2 = yield* spawnLockHolder(fresh.lock)
      const error2 = yield* Effect.flip(Effect.scoped(openLog(root, "fresh", { requireExclusive: true })))
      assert.strictEqual(error2._tag, "SessionLocked")
      assert.isFalse(fs.existsSync(fresh.events))
      assert.isFalse(fs.existsSync(fresh.manifest))
      yield* killAndWait(holder)
      yield* killAndWait(holder2)
      // The failed opens left nothing behind in the registry or the kernel.
      const log = yield* openLog(root, "busy", { requireExclusive: true })
      assert.strictEqual(log.lockState, "exclusive")
      assert.strictEqual((yield* log.manifest).turn_count, 1)
    }).pipe(Effect.provide(nodeLayer())))

  it.effect("a handle joining a session opened while another process held the lock is refused when exclusive", () =>
    Effect.gen(function*() {
      const { root } = yield* testRoot
      const paths = pathsOf(root, "joined")
      yield* spawnLockHolder(paths.lock)
      const first = yield* openLog(root, "joined")
      assert.strictEqual(first.lockState, "held-elsewhere")
      const error = yield* Effect.flip(Effect.scoped(openLog(root, "joined", { requireExclusive: true })))
      assert.strictEqual(error._tag, "SessionLocked")
      yield* appendAll(first, turn("still usable"))
      assertDiskConsistent(paths)
    }).pipe(Effect.provide(nodeLayer())))
})
