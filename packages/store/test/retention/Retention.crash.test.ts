/**
 * Retention under injected faults: the process "dies" (every system call from the N-th on fails)
 * at each instant of a run in turn. Whatever the instant, each session is either listed whole or
 * not listed at all, errors reach the caller, and the next clean run finishes the job and empties
 * the trash.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Exit, Layer } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { FaultController, SessionFs } from "../../src/fs/SessionFs.ts"
import { TRASH_DIR } from "../../src/retention/internal/retentionRemove.ts"
import { Retention } from "../../src/retention/Retention.ts"
import {
  isoDaysAgo,
  listed,
  manifestText,
  retentionSetup,
  snapshot,
  writeSession
} from "../fixtures/retention-helpers.ts"

const faultyLayer = Retention.layer.pipe(Layer.provideMerge(SessionFs.layerFaulty()))

const policy = { maxSessions: 1, maxAgeDays: 30 }

const abandonedSpec = { status: "active", updatedAt: isoDaysAgo(50) } as const

/** Rebuilds the root: `keep` (recent), `doomed` (40 days old), `abandoned` (active, 50 days old). */
const populate = (root: string): void => {
  for (const name of fs.readdirSync(root)) fs.rmSync(path.join(root, name), { recursive: true, force: true })
  writeSession(root, "keep", { updatedAt: isoDaysAgo(1) })
  writeSession(root, "doomed", { updatedAt: isoDaysAgo(40) })
  writeSession(root, "abandoned", abandonedSpec)
}

layer(faultyLayer)("Retention under faults", (it) => {
  it.effect("a crash at any instant leaves every session either whole or gone, and the next run recovers", () =>
    Effect.gen(function*() {
      const { retention, root } = yield* retentionSetup
      const faults = yield* FaultController
      populate(root)
      const whole = { keep: snapshot(path.join(root, "keep")), doomed: snapshot(path.join(root, "doomed")) }
      const abandonedManifests = [
        manifestText("abandoned", abandonedSpec),
        JSON.stringify(
          { ...(JSON.parse(manifestText("abandoned", abandonedSpec)) as object), status: "completed" },
          null,
          2
        )
      ]
      let failuresAfterRename = 0
      for (let call = 0; call < 10_000; call++) {
        populate(root)
        yield* faults.reset
        yield* faults.arm({ _tag: "Fail", call, code: "EIO", persistent: true })
        const exit = yield* Effect.exit(retention.apply(root, policy))
        const fired = (yield* faults.injected) > 0
        yield* faults.reset

        const names = listed(root)
        assert.include(names, "keep")
        assert.deepStrictEqual(snapshot(path.join(root, "keep")), whole.keep, `keep, crash at call ${call}`)
        if (names.includes("doomed")) {
          assert.deepStrictEqual(snapshot(path.join(root, "doomed")), whole.doomed, `doomed, crash at call ${call}`)
        } else if (Exit.isFailure(exit)) {
          failuresAfterRename++
        }
        if (names.includes("abandoned")) {
          const dir = path.join(root, "abandoned")
          assert.include(abandonedManifests, fs.readFileSync(path.join(dir, "manifest.json"), "utf8"), `call ${call}`)
          assert.isTrue(fs.existsSync(path.join(dir, "events.jsonl")), `call ${call}`)
          assert.isTrue(fs.existsSync(path.join(dir, "index", "turns.json")), `call ${call}`)
        }

        const recovery = yield* retention.apply(root, policy)
        assert.deepStrictEqual(listed(root), ["keep"], `after recovery from a crash at call ${call}`)
        assert.deepStrictEqual(fs.readdirSync(path.join(root, TRASH_DIR)), [], `trash after call ${call}`)
        assert.deepStrictEqual(snapshot(path.join(root, "keep")), whole.keep)
        if (!fired) {
          // The fault lay beyond the last call: this was a clean run, and it did everything.
          assert.isTrue(Exit.isSuccess(exit))
          if (Exit.isSuccess(exit)) {
            assert.deepStrictEqual(exit.value.marked, ["abandoned"])
            assert.deepStrictEqual(exit.value.removed, [
              { id: "abandoned", phase: "over-limit" },
              { id: "doomed", phase: "over-limit" }
            ])
          }
          assert.deepStrictEqual(recovery, { marked: [], removed: [] })
          break
        }
      }
      // Some crash instants fell after the rename into the trash: the error was still returned.
      assert.isAbove(failuresAfterRename, 0)
    }))

  it.effect("an error listing the sessions root is returned, not reported as an empty run", () =>
    Effect.gen(function*() {
      const { retention, root } = yield* retentionSetup
      const faults = yield* FaultController
      writeSession(root, "s", { turnCount: 0 })
      yield* faults.reset
      yield* faults.arm({ _tag: "Fail", op: "readdir", call: 0, code: "EACCES", persistent: true })
      const error = yield* Effect.flip(retention.apply(root))
      yield* faults.reset
      assert.strictEqual(error._tag, "StoreIoError")
      assert.strictEqual(error.code, "EACCES")
      assert.deepStrictEqual(listed(root), ["s"])
    }))

  it.effect("a failing removal is returned as an error and the session is gone from the listing", () =>
    Effect.gen(function*() {
      const { retention, root } = yield* retentionSetup
      const faults = yield* FaultController
      writeSession(root, "s", { turnCount: 0 })
      yield* faults.reset
      yield* faults.arm({ _tag: "Fail", op: "rmdir", call: 0, code: "EIO" })
      const error = yield* Effect.flip(retention.evictZeroTurnCompletedStore(root, "s"))
      yield* faults.reset
      assert.strictEqual(error.code, "EIO")
      assert.deepStrictEqual(listed(root), [])
      assert.strictEqual(fs.readdirSync(path.join(root, TRASH_DIR)).length, 1)
      assert.deepStrictEqual(yield* retention.apply(root), { marked: [], removed: [] })
      assert.deepStrictEqual(fs.readdirSync(path.join(root, TRASH_DIR)), [])
    }))
})
