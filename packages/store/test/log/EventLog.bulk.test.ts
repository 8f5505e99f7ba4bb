/**
 * `barrierAtTurnBoundary: false` (bulk writers such as importers): turn boundaries no longer run
 * the durability barrier — nothing reaches disk until `flush` or 64 KiB — and after the final
 * flush the session is exactly what the default mode writes.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import { appendAll, nodeLayer, openLog, pathsOf, testRoot, turn } from "../fixtures/eventlogHelpers.ts"

const read = (p: string): string => (fs.existsSync(p) ? fs.readFileSync(p, "utf8") : "")

describe("EventLog without turn-boundary barriers", () => {
  it.effect("closed turns stay in memory until flush, then the files equal the default mode's", () =>
    Effect.gen(function*() {
      const { root } = yield* testRoot
      const events = [...turn("one"), ...turn("two")]
      yield* Effect.scoped(Effect.gen(function*() {
        const log = yield* openLog(root, "bulk", { barrierAtTurnBoundary: false })
        yield* appendAll(log, events)
        assert.strictEqual(read(pathsOf(root, "bulk").events), "")
        yield* log.flush
      }))
      yield* Effect.scoped(Effect.gen(function*() {
        const log = yield* openLog(root, "default")
        yield* appendAll(log, events)
        assert.notStrictEqual(read(pathsOf(root, "default").events), "")
      }))
      assert.strictEqual(read(pathsOf(root, "bulk").events), read(pathsOf(root, "default").events))
      assert.strictEqual(read(pathsOf(root, "bulk").turns), read(pathsOf(root, "default").turns))
      const manifest = yield* Effect.scoped(Effect.flatMap(openLog(root, "bulk"), (log) => log.manifest))
      assert.strictEqual(manifest.turn_count, 2)
    }).pipe(Effect.provide(nodeLayer())))
})
