/**
 * The liveness lock (docs/format.md#session-lock, docs/log.md#liveness-lock) through SessionFs.tryLock / probeLock and
 * isSessionLive, within one process and against a separate lock-holding process.
 */
import { assert, describe, it } from "@effect/vitest"
import { tempDir as makeTempDir } from "@logbook/testkit"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { SessionFs } from "../../src/fs/SessionFs.ts"
import { isSessionLive, sessionLockProbe } from "../../src/retention/Liveness.ts"
import { killAndWait, spawnLockHolder } from "../fixtures/eventlogHelpers.ts"

const tempDir = makeTempDir("lock")

describe("Liveness", () => {
  it.effect("a session without session.lock is not live", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const sfs = yield* SessionFs
      assert.isFalse(yield* isSessionLive(dir))
      assert.strictEqual(yield* sfs.probeLock(path.join(dir, "session.lock")), "absent")
      assert.isFalse(fs.existsSync(path.join(dir, "session.lock")), "probing must not create the lock file")
    }).pipe(Effect.provide(SessionFs.layerNode)))

  it.effect("a lock held in this process is seen as held by a second probe and a second tryLock", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const sfs = yield* SessionFs
      const lockPath = path.join(dir, "session.lock")
      const first = yield* sfs.tryLock(lockPath)
      assert.strictEqual(first._tag, "Acquired")
      assert.strictEqual(fs.statSync(lockPath).mode & 0o777, 0o600)
      assert.strictEqual(yield* sfs.probeLock(lockPath), "held")
      assert.isTrue(yield* isSessionLive(dir))
      assert.strictEqual((yield* sfs.tryLock(lockPath))._tag, "HeldElsewhere")
      if (first._tag === "Acquired") {
        yield* first.release
        yield* first.release
      }
      assert.strictEqual(yield* sfs.probeLock(lockPath), "free")
      assert.isFalse(yield* isSessionLive(dir))
      const again = yield* sfs.tryLock(lockPath)
      assert.strictEqual(again._tag, "Acquired")
      if (again._tag === "Acquired") yield* again.release
    }).pipe(Effect.provide(SessionFs.layerNode)))

  it.live("a lock held by another process is held until that process is killed", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const sfs = yield* SessionFs
      const lockPath = path.join(dir, "session.lock")
      yield* sfs.createFileIfAbsent(lockPath)
      const child = yield* spawnLockHolder(lockPath)
      assert.strictEqual((yield* sfs.tryLock(lockPath))._tag, "HeldElsewhere")
      assert.strictEqual(yield* sfs.probeLock(lockPath), "held")
      assert.isTrue(yield* isSessionLive(dir))
      yield* killAndWait(child)
      assert.strictEqual(yield* sfs.probeLock(lockPath), "free")
      assert.isFalse(yield* isSessionLive(dir))
      const mine = yield* sfs.tryLock(lockPath)
      assert.strictEqual(mine._tag, "Acquired")
      if (mine._tag === "Acquired") yield* mine.release
    }).pipe(Effect.provide(SessionFs.layerNode)))

  it.effect("a symlinked session.lock is unavailable to tryLock, probes as a link (not as held) and counts as live", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const sfs = yield* SessionFs
      fs.writeFileSync(path.join(dir, "elsewhere"), "")
      fs.symlinkSync(path.join(dir, "elsewhere"), path.join(dir, "session.lock"))
      const result = yield* sfs.tryLock(path.join(dir, "session.lock"))
      assert.strictEqual(result._tag, "Unavailable")
      assert.strictEqual(yield* sfs.probeLock(path.join(dir, "session.lock")), "link")
      assert.strictEqual(yield* sessionLockProbe(dir), "link")
      // Retention never removes what it cannot check.
      assert.isTrue(yield* isSessionLive(dir))
    }).pipe(Effect.provide(SessionFs.layerNode)))
})
