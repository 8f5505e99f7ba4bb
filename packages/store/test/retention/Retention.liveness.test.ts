/**
 * Retention and live sessions: a session whose `session.lock` is held by another process (a
 * spawned Node child) is never marked abandoned nor removed, whatever its age or status; once
 * that process dies the kernel drops the lock and the session becomes eligible.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import * as fs from "node:fs"
import * as path from "node:path"
import { SessionFs } from "../../src/fs/SessionFs.ts"
import { isSessionLive } from "../../src/retention/Liveness.ts"
import { Retention } from "../../src/retention/Retention.ts"
import {
  holdLocks,
  isoDaysAgo,
  listed,
  NOW,
  retentionLayer,
  retentionSetup,
  snapshot,
  workspace,
  writeSession
} from "../fixtures/retention-helpers.ts"

const policy = { maxSessions: 0, maxAgeDays: 1 }

layer(retentionLayer)("Retention and live sessions", (it) => {
  it.effect("a session held open by another process is never marked or removed", () =>
    Effect.gen(function*() {
      const { retention, root } = yield* retentionSetup
      const done = writeSession(root, "held-done", { turnCount: 0, updatedAt: isoDaysAgo(400) })
      const active = writeSession(root, "held-active", { status: "active", updatedAt: isoDaysAgo(400) })
      writeSession(root, "free", { turnCount: 0, updatedAt: isoDaysAgo(400) })
      const locks = [done, active].map((dir) => path.join(dir, "session.lock"))
      yield* Effect.scoped(Effect.gen(function*() {
        yield* holdLocks(locks)
        assert.isTrue(yield* isSessionLive(done))
        const heldBefore = { done: snapshot(done), active: snapshot(active) }
        const report = yield* retention.apply(root, policy)
        assert.deepStrictEqual(report, { marked: [], removed: [{ id: "free", phase: "zero-turn" }] })
        assert.deepStrictEqual(yield* retention.markAbandoned(root, 1), [])
        assert.isFalse(yield* retention.evictZeroTurnCompletedStore(root, "held-done"))
        assert.deepStrictEqual({ done: snapshot(done), active: snapshot(active) }, heldBefore)
        assert.deepStrictEqual(listed(root), ["held-active", "held-done"])
      }))
      // The holder was killed with the scope: its locks died with it.
      assert.isFalse(yield* isSessionLive(done))
      const after = yield* retention.apply(root, policy)
      assert.deepStrictEqual(after.marked, ["held-active"])
      assert.deepStrictEqual(after.removed, [
        { id: "held-done", phase: "zero-turn" },
        { id: "held-active", phase: "over-limit" }
      ])
      assert.deepStrictEqual(listed(root), [])
      assert.isFalse(fs.existsSync(done))
    }))
})

describe("Retention and a session that comes alive after enumeration", () => {
  it.effect("re-inspects each chosen session and leaves it alone once it is live", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(NOW)
      const { root } = yield* workspace
      const dir = writeSession(root, "s", { turnCount: 0 })
      const manifest = path.join(dir, "manifest.json")
      // After enumeration read the manifest (the sweep read it first), a host opens the session.
      const opening = Layer.effect(
        SessionFs,
        Effect.gen(function*() {
          const inner = yield* SessionFs
          let reads = 0
          const releases: Array<Effect.Effect<void>> = []
          yield* Effect.addFinalizer(() => Effect.all(releases, { discard: true }))
          return SessionFs.of({
            ...inner,
            readFileNoFollow: (p) =>
              Effect.tap(inner.readFileNoFollow(p), () =>
                p === manifest && ++reads === 2
                  ? Effect.map(inner.tryLock(path.join(dir, "session.lock")), (lock) => {
                    if (lock._tag === "Acquired") releases.push(lock.release)
                  })
                  : Effect.void)
          })
        })
      ).pipe(Layer.provide(SessionFs.layerNode))
      const report = yield* Retention.use((r) => r.apply(root, policy)).pipe(
        Effect.provide(Retention.layer.pipe(Layer.provide(opening)))
      )
      assert.deepStrictEqual(report, { marked: [], removed: [] })
      assert.deepStrictEqual(listed(root), ["s"])
    }))
})
