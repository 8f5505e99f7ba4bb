/**
 * Exactly once under faults: `logbook replicate` child processes are SIGKILLed at random instants
 * while a writer appends to the sessions (one of them over its cap, so its log is rewritten and
 * replication moves to new epochs), and their connections go through a proxy that cuts the socket
 * after a random number of bytes — in handshakes, queries and open transactions. Afterwards one
 * clean run catches up and the fleet is compared with the local logs line by line (offset,
 * length, SHA-256): nothing lost, nothing duplicated, nothing that was not in the log.
 *
 * The number of kills is `LOGBOOK_FLEET_KILLS` (default 8 here, where `npm test` must stay quick; the real-server lane of `.ci/run`
 * asks for at least 200). Also: two replicators at once on the same store (real server only).
 */
import { assert, describe, it } from "@effect/vitest"
import { layerFleetClient } from "@logbook/fleet"
import type { LogLine, Prng } from "@logbook/testkit"
import {
  busyServerRetry,
  fleetCursor,
  fleetLines,
  fleetTestTarget,
  logLines,
  mulberry32,
  nodeLayer,
  openLog,
  resetFleetDatabase,
  sessionsRoot,
  testDatabaseIsEmbedded,
  turn
} from "@logbook/testkit"
import { Effect, Fiber, Redacted } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import type { ChildProcess } from "node:child_process"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { assertBuilt, BIN } from "../harness.ts"
import { cuttingProxy } from "./support/cuttingProxy.ts"

const KILLS = Math.max(1, Number(process.env["LOGBOOK_FLEET_KILLS"] ?? "8") || 8)
const SEED = Number(process.env["LOGBOOK_FLEET_SEED"] ?? "19") || 19

/** Runs `effect` on a client closed afterwards (the embedded server admits one connection at a time). */
const withFleet = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>) =>
  Effect.flatMap(fleetTestTarget, (target) =>
    effect.pipe(
      Effect.provide(layerFleetClient(target, { maxConnections: 1 })),
      // The embedded server refuses a connection until it has seen the previous one close.
      Effect.retry(busyServerRetry),
      Effect.orDie
    ))

const childEnv = (): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = { ...process.env }
  delete env["LOGBOOK_DATABASE_URL"]
  delete env["LOGBOOK_SESSIONS_DIR"]
  return env
}

interface Exited {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stderr: string
}

/** Starts `logbook replicate` as a child; `exited` resolves when it is gone. */
const startReplicator = (root: string, url: string, batchLines: number) => {
  const child: ChildProcess = spawn(
    process.execPath,
    [BIN, "--sessions-dir", root, "replicate", "--to", url, "--batch-lines", String(batchLines)],
    { env: childEnv(), stdio: ["ignore", "ignore", "pipe"] }
  )
  let stderr = ""
  child.stderr?.on("data", (d: Buffer) => (stderr += d.toString()))
  const exited = new Promise<Exited>((resolve) =>
    child.on("close", (code, signal) => resolve({ code, signal, stderr }))
  )
  return { child, exited }
}

/** Runs a replicator to its end; dies with its stderr when it fails. */
const replicateToEnd = (root: string, url: string) =>
  Effect.gen(function*() {
    const { exited } = startReplicator(root, url, 500)
    const result = yield* Effect.promise(() => exited)
    if (result.code !== 0) {
      return yield* Effect.die(new Error(`final replicate failed (${result.code}): ${result.stderr}`))
    }
  })

const record = (root: string, history: Map<string, Array<Array<LogLine>>>, session: string) => {
  const file = path.join(root, session, "events.jsonl")
  if (!fs.existsSync(file)) return
  const logs = history.get(session) ?? []
  logs.push(logLines(fs.readFileSync(file)))
  history.set(session, logs)
}

const CAPPED = "capped"
const SESSIONS = ["s-one", "s-two", "s-three", CAPPED]

/**
 * Appends whole turns to one session. The capped one rewrites its log when over 120 events; its
 * summary hook, which runs after the rewrite flushed the buffered bytes and before the log is
 * replaced, records the log as it is then: what an older epoch in the fleet must be a prefix of.
 */
const appendTurns = (
  root: string,
  session: string,
  turns: number,
  label: string,
  history: Map<string, Array<Array<LogLine>>>
) =>
  Effect.scoped(Effect.gen(function*() {
    const log = yield* openLog(
      root,
      session,
      session === CAPPED
        ? { maxEvents: 120, summaryHook: () => Effect.sync(() => record(root, history, CAPPED)) }
        : {}
    )
    for (let i = 0; i < turns; i++) {
      for (const e of turn(`${label} ${i} ${"x".repeat(i * 7)}`)) yield* log.append(e)
    }
    yield* log.flush
  })).pipe(Effect.provide(nodeLayer()), Effect.orDie)

/** Compares every session's fleet rows with its local log (current epoch) or a recorded earlier log (older epochs). */
const compareAll = (root: string, history: Map<string, Array<Array<LogLine>>>) =>
  withFleet(Effect.gen(function*() {
    let total = 0
    for (const session of SESSIONS) {
      const current = yield* fleetCursor(session)
      assert.isDefined(current, `no cursor for ${session}`)
      if (current === undefined) continue
      const local = logLines(fs.readFileSync(path.join(root, session, "events.jsonl")))
      for (let epoch = 0; epoch <= current.epoch; epoch++) {
        // fleetLines also checks that every stored line's bytes match its digest and length.
        const stored = yield* fleetLines(session, epoch)
        total += stored.length
        if (epoch === current.epoch) {
          assert.deepStrictEqual(stored, local, `${session} epoch ${epoch} equals the local log line by line`)
          const end = local.at(-1)
          assert.strictEqual(current.offset, end === undefined ? 0 : end.offset + end.length + 1)
        } else {
          // An older epoch is a prefix of a log the session had before one of its rewrites.
          const logs = history.get(session) ?? []
          const matches = logs.some((lines) =>
            lines.length >= stored.length &&
            stored.every((s, i) => {
              const l = lines[i]
              return l !== undefined && l.offset === s.offset && l.length === s.length && l.sha256 === s.sha256
            })
          )
          assert.isTrue(matches, `${session} epoch ${epoch} (${stored.length} lines) is a prefix of an earlier log`)
        }
      }
    }
    return total
  }))

/** One writer step: a few turns to a random session, recording the capped log before it may be rewritten. */
const writerStep = (root: string, prng: Prng, history: Map<string, Array<Array<LogLine>>>, step: number) =>
  Effect.gen(function*() {
    const session = step === 0 || prng.chance(0.4) ? CAPPED : prng.pick(SESSIONS)
    yield* appendTurns(root, session, prng.int(1, 6), `step ${step}`, history)
  })

describe("logbook replicate under faults", () => {
  it.live(
    `every acknowledged line is in the fleet exactly once after ${KILLS} SIGKILLs and dropped connections`,
    () =>
      Effect.gen(function*() {
        assertBuilt()
        yield* withFleet(resetFleetDatabase)
        const prng = mulberry32(SEED)
        const { root } = yield* sessionsRoot("fleet-faults")
        const history = new Map<string, Array<Array<LogLine>>>()
        // The capped session starts just under its cap: every later step on it rewrites its log.
        for (const session of SESSIONS) yield* appendTurns(root, session, session === CAPPED ? 38 : 30, "seed", history)
        const target = yield* fleetTestTarget
        const direct = new URL(Redacted.value(target.url))
        const proxy = yield* cuttingProxy({
          upstreamHost: direct.hostname,
          upstreamPort: Number(direct.port || "5432"),
          prng,
          cutChance: 0.3,
          maxCutBytes: 40_000
        })
        const viaProxy = new URL(direct.toString())
        viaProxy.host = `127.0.0.1:${proxy.port}`
        // A first clean run gives every session a cursor (so the capped session's rewrites move it to
        // new epochs) and measures how long a run takes on this machine, which may be busy: kills then
        // land anywhere from before the connection to well into the work.
        const started = Date.now()
        yield* replicateToEnd(root, direct.toString())
        const startup = Date.now() - started
        // How long a run that ends on its own takes (followed as runs finish): kill delays are drawn
        // below it, so most runs die somewhere between their start and their end.
        let typical = startup
        let kills = 0
        let finished = 0
        for (let step = 0; kills < KILLS && step < KILLS * 10; step++) {
          const spawned = Date.now()
          const { child, exited } = startReplicator(root, viaProxy.toString(), prng.int(1, 8))
          const writer = yield* Effect.forkChild(writerStep(root, prng, history, step))
          const delay = prng.int(0, Math.max(50, Math.floor(typical * 1.1)))
          const outcome = yield* Effect.race(
            Effect.as(Effect.sleep(`${delay} millis`), "timeout" as const),
            Effect.promise(() => exited).pipe(Effect.as("exited" as const))
          )
          if (outcome === "timeout") {
            child.kill("SIGKILL")
            const result = yield* Effect.promise(() => exited)
            if (result.signal === "SIGKILL") kills++
            else finished++
          } else {
            const result = yield* Effect.promise(() => exited)
            // A run cut off by the proxy more often than it retries fails; never with a conflict.
            assert.notStrictEqual(result.code, 5, result.stderr)
            finished++
            typical = Math.round((typical + (Date.now() - spawned)) / 2)
          }
          yield* Fiber.join(writer)
        }
        assert.isAtLeast(kills, KILLS)
        // Then runs left to end while most of their connections are cut — in handshakes, queries and
        // open transactions — each retrying on a new connection (a run may give up: exit 1).
        const killCuts = proxy.cuts()
        proxy.setCuts(0.8, 6_000)
        for (let run = 0; run < Math.max(5, Math.ceil(KILLS / 4)); run++) {
          const { exited } = startReplicator(root, viaProxy.toString(), prng.int(1, 8))
          yield* writerStep(root, prng, history, run + 10_000)
          const result = yield* Effect.promise(() => exited)
          assert.include([0, 1], result.code, result.stderr)
        }
        assert.isAbove(proxy.cuts(), killCuts, "connections were cut")
        record(root, history, CAPPED)
        yield* replicateToEnd(root, direct.toString())
        const total = yield* compareAll(root, history)
        const epochs = yield* withFleet(Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          return yield* sql<{ readonly n: bigint | number }>`
          select count(*) as n from session_epochs where session_id = ${CAPPED}`
        }))
        console.log(
          `fleet faults: ${kills} kills, ${finished} runs that ended on their own, ${proxy.cuts()} cut connections, ` +
            `${total} lines compared, ${Number(epochs[0]?.n)} epochs of the capped session ` +
            `(seed ${SEED}, a run starts in ${startup} ms)`
        )
        assert.isAbove(Number(epochs[0]?.n), 1, "the capped session was rewritten during replication")
      }),
    { timeout: Math.max(600_000, KILLS * 8_000) }
  )

  it.live.skipIf(testDatabaseIsEmbedded())(
    "two replicators of the same store at once neither duplicate nor lose a line (needs a real server: the embedded one admits one connection)",
    () =>
      Effect.gen(function*() {
        assertBuilt()
        yield* withFleet(resetFleetDatabase)
        const prng = mulberry32(SEED + 1)
        const { root } = yield* sessionsRoot("fleet-concurrent")
        const history = new Map<string, Array<Array<LogLine>>>()
        for (const session of SESSIONS) yield* appendTurns(root, session, 40, "seed", history)
        const url = Redacted.value((yield* fleetTestTarget).url)
        for (let round = 0; round < 6; round++) {
          const a = startReplicator(root, url, prng.int(1, 10))
          const b = startReplicator(root, url, prng.int(1, 10))
          yield* writerStep(root, prng, history, round)
          const results = yield* Effect.promise(() => Promise.all([a.exited, b.exited]))
          for (const r of results) assert.strictEqual(r.code, 0, r.stderr)
        }
        record(root, history, CAPPED)
        yield* replicateToEnd(root, url)
        yield* compareAll(root, history)
      }),
    { timeout: 600_000 }
  )
})
