import { assert, describe, it } from "@effect/vitest"
import { encodeLine, isIndexConsistent, isIndexValid } from "@logbook/domain"
import { Effect, Exit } from "effect"
import { TestClock } from "effect/testing"
import * as fs from "node:fs"
import { FaultController } from "../../src/fs/SessionFs.ts"
import { ev, faultyLayer, nodeLayer, openLog, pathsOf, testRoot } from "../fixtures/eventlogHelpers.ts"

/** Records two closed turns and an open one, then closes the session (metadata published). */
const seed = (root: string, id: string) =>
  Effect.scoped(Effect.gen(function*() {
    const log = yield* openLog(root, id)
    for (const e of [ev.turnStarted(), ev.msg("a"), ev.completed(), ev.turnStarted(), ev.msg("b"), ev.completed()]) {
      yield* log.append(e)
    }
    yield* log.append(ev.turnStarted())
    yield* log.append(ev.msg("open"))
  }))

describe("EventLog fast-path open with a lazily loaded turn index", () => {
  it.effect("opening does not read the turn index; the first operation does and sees every turn", () =>
    Effect.gen(function*() {
      const { root } = yield* testRoot
      yield* seed(root, "s")
      const turns = pathsOf(root, "s").turns
      yield* Effect.scoped(Effect.gen(function*() {
        const log = yield* openLog(root, "s")
        // Corrupting the index after open proves the open itself never parsed it.
        fs.writeFileSync(turns, "{\"entries\":[{\"turn_number\":7}]}")
        const index = yield* log.turnIndex
        // The corrupt index was rejected on first use and the log rescanned instead.
        assert.deepStrictEqual(index.map((e) => e.turn_number), [1, 2, 3])
        const manifest = yield* log.manifest
        assert.strictEqual(manifest.turn_count, 2)
        assert.strictEqual(manifest.in_turn, true)
        yield* log.append(ev.completed())
        assert.strictEqual((yield* log.manifest).turn_count, 3)
      }))
      const stored = JSON.parse(fs.readFileSync(turns, "utf8"))
      assert.deepStrictEqual(stored.entries.map((e: { turn_number: number }) => e.turn_number), [1, 2, 3])
    }).pipe(Effect.provide(nodeLayer())))

  it.effect("a failure while loading the index on first use is a typed error and the next operation retries", () =>
    Effect.gen(function*() {
      const { root } = yield* testRoot
      yield* seed(root, "s")
      const faults = yield* FaultController
      yield* Effect.scoped(Effect.gen(function*() {
        const log = yield* openLog(root, "s")
        yield* faults.reset
        yield* faults.arm({ _tag: "Fail", call: 0, code: "EIO" })
        const first = yield* Effect.exit(log.append(ev.msg("lost")))
        assert.isTrue(Exit.isFailure(first))
        yield* faults.reset
        yield* log.append(ev.msg("kept"))
        yield* log.append(ev.completed())
        const turn = yield* log.reconstructTurn(3)
        const texts = turn.events.flatMap((e) =>
          e.type === "item.completed" && e.item.type === "agent_message" ? [e.item.text] : []
        )
        assert.deepStrictEqual(texts, ["open", "kept"])
      }))
    }).pipe(Effect.provide(faultyLayer())))

  it.effect("a turn index too large for one write is streamed and reads back identically", () =>
    Effect.gen(function*() {
      const { root } = yield* testRoot
      const paths = pathsOf(root, "big")
      fs.mkdirSync(paths.dir, { recursive: true, mode: 0o700 })
      const turns = 6000
      const lines: Array<string> = []
      for (let t = 1; t <= turns; t++) {
        lines.push(encodeLine(ev.turnStarted()), encodeLine(ev.msg(`t${t}`)), encodeLine(ev.completed()))
      }
      fs.writeFileSync(paths.events, lines.join("\n") + "\n")
      const written = yield* Effect.scoped(Effect.flatMap(openLog(root, "big"), (log) => log.turnIndex))
      assert.strictEqual(written.length, turns)
      const stored = JSON.parse(fs.readFileSync(paths.turns, "utf8")).entries
      assert.deepStrictEqual(stored, written)
      yield* Effect.scoped(Effect.gen(function*() {
        const log = yield* openLog(root, "big")
        const index = yield* log.turnIndex
        const manifest = yield* log.manifest
        assert.deepStrictEqual(index, written)
        assert.isTrue(isIndexValid(index, fs.statSync(paths.events).size))
        assert.isTrue(isIndexConsistent(index, manifest))
      }))
    }).pipe(Effect.provide(nodeLayer())))

  it.effect("opening with the lock removes temp files a crash left behind, but not recent ones", () =>
    Effect.gen(function*() {
      const { root } = yield* testRoot
      yield* seed(root, "tmp")
      const paths = pathsOf(root, "tmp")
      const stale = `${paths.indexDir}/.turns.json.4242.1700000000000000000.0.tmp`
      const fresh = `${paths.dir}/.manifest.json.4242.1700000000000000001.0.tmp`
      fs.writeFileSync(stale, "{")
      fs.writeFileSync(fresh, "{")
      const old = new Date(Date.now() - 2 * 60 * 60 * 1000)
      fs.utimesSync(stale, old, old)
      yield* TestClock.setTime(Date.now())
      yield* Effect.scoped(openLog(root, "tmp"))
      assert.isFalse(fs.existsSync(stale), "a two-hour-old temp file is removed")
      assert.isTrue(fs.existsSync(fresh), "a recent temp file may belong to a write in progress")
    }).pipe(Effect.provide(nodeLayer())))
})
