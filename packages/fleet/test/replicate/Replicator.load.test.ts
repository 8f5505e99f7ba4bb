/**
 * The `Replicator` layer under load: 50 sessions appended concurrently while the layer's watch
 * fiber replicates them. Checks that the fleet ends equal to every local log line by line, and
 * REPORTS (prints, never asserts) the lines replicated per second and the lag — how long after the
 * last append the fleet held every line. `LOGBOOK_FLEET_LOAD_TURNS` sets the turns per session.
 */
import { assert, describe, it } from "@effect/vitest"
import { Replicator } from "@logbook/fleet"
import {
  fleetLines,
  layerFreshFleet,
  localLines,
  nodeLayer,
  openLog,
  pathsOf,
  sessionsRoot,
  turn
} from "@logbook/testkit"
import { Effect, Layer, Option } from "effect"
import * as SqlClient from "effect/sql/SqlClient"

const SESSIONS = 50
const TURNS = Math.max(1, Number(process.env["LOGBOOK_FLEET_LOAD_TURNS"] ?? "20") || 20)

const fleetCount = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<{ readonly n: bigint | number }>`select count(*) as n from events`
  return Number(rows[0]?.n ?? 0)
}).pipe(Effect.orDie)

describe("Replicator (load)", () => {
  it.live(
    `${SESSIONS} sessions appended concurrently while the Replicator layer runs end equal to the local logs`,
    () =>
      Effect.gen(function*() {
        const { root } = yield* sessionsRoot("fleet-load")
        const ids = Array.from({ length: SESSIONS }, (_, i) => `load-${String(i).padStart(2, "0")}`)
        const expected = ids.length * TURNS * 3
        const started = Date.now()
        const replicator = Replicator.layer({
          sessionsDir: root,
          originHost: "load-host",
          interval: "50 millis",
          onError: (e) => Effect.sync(() => console.log("replicator pass failed, retrying:", e))
        })
        const result = yield* Effect.scoped(Effect.gen(function*() {
          const context = yield* Layer.build(replicator)
          // Every session appends its turns concurrently, a turn at a time, flushed at each boundary.
          yield* Effect.forEach(ids, (id) =>
            Effect.scoped(Effect.gen(function*() {
              const log = yield* openLog(root, id)
              for (let t = 0; t < TURNS; t++) {
                for (const e of turn(`session ${id} turn ${t} ${"y".repeat(t % 13)}`)) yield* log.append(e)
                yield* Effect.yieldNow
              }
              yield* log.flush
            })), { concurrency: "unbounded", discard: true })
          const writersDone = Date.now()
          for (let i = 0; i < 6000 && (yield* fleetCount) < expected; i++) yield* Effect.sleep("50 millis")
          const caughtUp = Date.now()
          // The pass that caught up may still be mirroring files: wait for a finished one.
          const lastReport = Effect.provideContext(Replicator.use((r) => r.lastReport), context)
          for (let i = 0; i < 6000 && Option.isNone(yield* lastReport); i++) yield* Effect.sleep("50 millis")
          return { writersDone, caughtUp, passes: Option.isSome(yield* lastReport) }
        }))
        assert.strictEqual(yield* fleetCount, expected)
        for (const id of ids) {
          assert.deepStrictEqual(yield* fleetLines(id, 0), localLines(pathsOf(root, id).events), id)
        }
        assert.isTrue(result.passes)
        const seconds = (result.caughtUp - started) / 1000
        console.log(
          `fleet load: ${expected} lines from ${SESSIONS} concurrent sessions replicated at ` +
            `${Math.round(expected / Math.max(seconds, 0.001))} lines/s; lag after the last append ` +
            `${result.caughtUp - result.writersDone} ms`
        )
      }).pipe(Effect.provide(Layer.merge(layerFreshFleet, nodeLayer()))),
    { timeout: 600_000 }
  )
})
