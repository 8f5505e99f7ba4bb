/**
 * P11 — replication into the fleet database (README.md#fleet-many-machines; reported, no goal
 * yet). Sessions of seeded turns are written through `EventLog` (local append lines/s: buffered
 * appends, flushed every 64 KiB and once at the end), then replicated by one `replicateStore` pass into a fresh fleet
 * (replicated lines/s). Ratio = replication lines/s ÷ local append lines/s. Then the load test:
 * the same number of sessions appended concurrently while the `Replicator` layer runs; the lag is
 * the time from the last append until the fleet holds every line.
 *
 * The fleet is `LOGBOOK_BENCH_DATABASE_URL` when set (its `public` schema is emptied: use a scratch
 * database), else an embedded PGlite served on a free 127.0.0.1 port for the run.
 */
import { PGlite } from "@electric-sql/pglite"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import type { ThreadEvent } from "@logbook/domain"
import {
  layerFleetClient,
  makeReplicationMemo,
  migrateFleet,
  parseFleetUrl,
  replicateStore,
  Replicator
} from "@logbook/fleet"
import { EventLog, SessionFs } from "@logbook/store"
import { Effect, Layer, Schedule } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import * as Path from "node:path"
import type { BenchContext } from "./lib/context.ts"
import { runStore, uncapped } from "./lib/logbook.ts"
import type { Outcome } from "./lib/measure.ts"
import { ms, rate } from "./lib/measure.ts"

const usage = { input_tokens: 1, cached_input_tokens: 0, cache_creation_tokens: 0, output_tokens: 2 }

const turnEvents = (session: number, t: number): ReadonlyArray<ThreadEvent> => [
  { type: "turn.started" },
  {
    type: "item.completed",
    item: { id: `m${t}`, type: "agent_message", text: `session ${session} turn ${t}: ${"lorem ipsum ".repeat(8)}` }
  },
  { type: "turn.completed", usage }
]

/**
 * Appends `turns` turns to each of `sessions` sessions, concurrently; returns the lines written.
 * `barriers`: a durability barrier at every turn boundary (what a live host does), else buffered
 * appends flushed every 64 KiB and at the end (the throughput P1 measures).
 */
const appendSessions = (sessionsDir: string, prefix: string, sessions: number, turns: number, barriers: boolean) =>
  runStore(Effect.forEach(
    Array.from({ length: sessions }, (_, s) => s),
    (s) =>
      Effect.scoped(Effect.gen(function*() {
        const log = yield* EventLog.open({
          sessionsDir,
          sessionId: `${prefix}-${s}`,
          ...uncapped,
          barrierAtTurnBoundary: barriers
        })
        for (let t = 0; t < turns; t++) {
          yield* log.appendAll(turnEvents(s, t))
          if (t % 50 === 49) yield* Effect.yieldNow
        }
        yield* log.flush
      })),
    { concurrency: "unbounded", discard: true }
  )).then(() => sessions * turns * 3)

const countLines = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<{ readonly n: bigint | number }>`select count(*) as n from events`
  return Number(rows[0]?.n ?? 0)
})

/** Runs P11 and prints its figures. */
export const runP11 = async (ctx: BenchContext): Promise<Outcome> => {
  const sessions = ctx.profile.quick ? 10 : 50
  const turns = ctx.profile.quick ? 200 : 1000
  let url = process.env["LOGBOOK_BENCH_DATABASE_URL"] ?? ""
  let stop = async (): Promise<void> => {}
  if (url === "") {
    const db = await PGlite.create()
    const server = new PGLiteSocketServer({ db, host: "127.0.0.1", port: 0, maxConnections: 1 })
    await server.start()
    url = `postgres://postgres@${server.getServerConn()}/postgres`
    stop = async () => {
      await server.stop()
      await db.close()
    }
  }
  try {
    const target = await Effect.runPromise(parseFleetUrl("bench", url))
    const client = layerFleetClient(target, { maxConnections: 1 })
    const withFleet = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient | SessionFs>) =>
      Effect.runPromise(effect.pipe(
        Effect.provide(Layer.merge(client, SessionFs.layerNode)),
        // The embedded server refuses a connection until it has seen the previous one close.
        Effect.retry({ schedule: Schedule.spaced("200 millis"), times: 25 })
      ))
    await withFleet(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`drop schema if exists public cascade`
      yield* sql`create schema public`
      yield* migrateFleet
    }))

    const sessionsDir = Path.join(ctx.root, "p11-sessions")
    const t0 = performance.now()
    const lines = await appendSessions(sessionsDir, "p11", sessions, turns, false)
    const appendMs = performance.now() - t0
    const t1 = performance.now()
    const report = await withFleet(replicateStore(sessionsDir, { originHost: "bench" }))
    const replicateMs = performance.now() - t1
    if (report.inserted !== lines) throw new Error(`replicated ${report.inserted} lines, expected ${lines}`)
    const ratio = (lines / replicateMs) / (lines / appendMs)

    // Load test: appends while the Replicator layer runs; lag = last append → fleet complete.
    const loadDir = Path.join(ctx.root, "p11-load")
    const loadTurns = Math.max(1, Math.floor(turns / 5))
    const lag = await withFleet(Effect.scoped(Effect.gen(function*() {
      const before = yield* countLines
      yield* Layer.build(Replicator.layer({
        sessionsDir: loadDir,
        originHost: "bench",
        interval: "100 millis",
        memo: makeReplicationMemo()
      }))
      const expected = before +
        (yield* Effect.promise(() => appendSessions(loadDir, "load", sessions, loadTurns, true)))
      const done = performance.now()
      while ((yield* countLines) < expected) yield* Effect.sleep("20 millis")
      return performance.now() - done
    })))

    console.log(`P11 replication: ${sessions} sessions × ${turns} turns, ${lines} lines (${target.display})`)
    console.log(`  local append ${ms(appendMs)}  ${rate(lines, appendMs, "lines")}`)
    console.log(`  replicate    ${ms(replicateMs)}  ${rate(lines, replicateMs, "lines")}`)
    console.log(`  ratio ${ratio.toFixed(3)}; load test (${sessions} sessions appended concurrently): lag ${ms(lag)}`)
    return {
      id: "P11",
      value: ratio,
      text: `${ratio.toFixed(3)} (lag ${Math.round(lag)} ms)`,
      goal: "reported",
      met: true
    }
  } finally {
    await stop()
  }
}
