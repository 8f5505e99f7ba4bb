/**
 * The SIGKILL crash loop over cap rewrites (docs/testing.md, docs/log.md#cap-eviction crash windows): a child
 * writer appends turns with a small `maxEvents`, so rewrites run all the time, and is killed
 * at a seeded random instant after a seeded number of acknowledged turns — progress is counted,
 * never timed, so a slow or busy machine runs the same workload, only more slowly. After every kill the parent reopens the session and checks it
 * against what the child acknowledged and against an independent rescan oracle. A short
 * seeded loop runs by default; `LOGBOOK_LONG=1` runs 1 000 kills.
 */
import { assert, describe, it } from "@effect/vitest"
import type { ThreadEvent } from "@logbook/domain"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import { fileURLToPath } from "node:url"
import { isDeepStrictEqual } from "node:util"
import * as EventLog from "../../src/log/EventLog.ts"
import { crashTurn, seededRandom } from "../fixtures/capCrashTurns.ts"
import { assertSessionConsistent, fileEvents, labelOf, LONG, storeLayer, tempRoot } from "../fixtures/capTestkit.ts"

const WRITER = fileURLToPath(new URL("../fixtures/capCrashWriter.ts", import.meta.url))
const SEED = 4242
const MAX_EVENTS = 40
const ITERATIONS = LONG ? 1_000 : 5

/**
 * Guaranteed progress per run: with at least 9 acknowledged turns per kill, 5 kills acknowledge 45
 * turns, while a cap of 40 events (turns of ≥ 2 events) retains at most 20, so rewrites must run.
 */
const MIN_ACKS = 9
const MAX_ACKS = 20

/**
 * Runs the writer until it acknowledged `ackTarget` turns, then SIGKILLs it `jitterMs` later (at
 * whatever point of a turn or rewrite it is by then); returns the acknowledged labels.
 */
const runWriterUntilKilled = (sessionsDir: string, ackTarget: number, jitterMs: number) =>
  Effect.callback<{ readonly ready: number; readonly acks: ReadonlyArray<number> }, Error>((resume) => {
    const child = spawn(
      process.execPath,
      ["--conditions=@logbook/source", WRITER, sessionsDir, "crash", String(SEED), String(MAX_EVENTS)],
      { stdio: ["ignore", "pipe", "pipe"] }
    )
    const acks: Array<number> = []
    let ready = 0
    let pending = ""
    let stderr = ""
    let timer: ReturnType<typeof setTimeout> | undefined
    child.stdout.setEncoding("utf8")
    child.stdout.on("data", (chunk: string) => {
      pending += chunk
      const lines = pending.split("\n")
      pending = lines.pop() ?? ""
      for (const line of lines) {
        const [word, value] = line.split(" ")
        if (word === "ack") {
          acks.push(Number(value))
          if (acks.length === ackTarget) timer = setTimeout(() => child.kill("SIGKILL"), jitterMs)
        }
        if (word === "ready") ready = Number(value)
      }
    })
    child.stderr.setEncoding("utf8")
    child.stderr.on("data", (chunk: string) => {
      stderr += chunk
    })
    child.on("exit", (code, signal) => {
      if (timer !== undefined) clearTimeout(timer)
      resume(
        signal === "SIGKILL"
          ? Effect.succeed({ ready, acks })
          : Effect.fail(new Error(`writer exited with ${code ?? signal}: ${stderr}`))
      )
    })
    return Effect.sync(() => void child.kill("SIGKILL"))
  })

describe("CapRewrite crash loop", () => {
  it.live(
    `SIGKILL at random instants during constant cap rewrites (${ITERATIONS} kills)`,
    () =>
      Effect.gen(function*() {
        const root = yield* tempRoot("cap-crash")
        const rng = seededRandom(SEED)
        const acked = new Set<number>()
        let maxAcked = 0
        let lastBase = 1
        let lastTurnCount = 0
        let evictedSoFar = 0
        for (let iteration = 0; iteration < ITERATIONS; iteration++) {
          const ackTarget = rng.int(MIN_ACKS, MAX_ACKS)
          const jitterMs = rng.int(0, 30)
          const run = yield* runWriterUntilKilled(root, ackTarget, jitterMs)
          for (const label of run.acks) {
            assert.isFalse(acked.has(label), `label ${label} acknowledged twice`)
            acked.add(label)
            maxAcked = Math.max(maxAcked, label)
          }
          assert.isAtLeast(run.acks.length, ackTarget, `iteration ${iteration}: killed only after its acks`)
          const where = `iteration ${iteration} (killed ${jitterMs} ms after ack ${ackTarget}, ${run.acks.length} acks)`
          yield* Effect.scoped(
            Effect.gen(function*() {
              const log = yield* EventLog.open({
                sessionsDir: root,
                sessionId: "crash",
                maxEvents: MAX_EVENTS,
                maxBytes: 0
              })
              const manifest = yield* assertSessionConsistent(log, where)
              assert.isFalse(fs.existsSync(log.paths.marker), `${where}: marker removed on open`)
              const base = manifest.retained_turn_base ?? 1
              // Numbers only move forward across kills and rewrites.
              assert.isAtLeast(base, lastBase, `${where}: retained base`)
              assert.isAtLeast(manifest.turn_count, lastTurnCount, `${where}: turn count`)
              assert.isAtLeast(manifest.turn_count, maxAcked, `${where}: every acknowledged turn is counted`)
              assert.isAtMost(base, maxAcked + 2, `${where}: nothing beyond the writer's progress was evicted`)
              lastBase = base
              lastTurnCount = manifest.turn_count
              // Every retained turn carries its own label and exactly its events (a prefix when unacknowledged).
              const index = yield* log.turnIndex
              for (const entry of index) {
                const turn = yield* log.reconstructTurn(entry.turn_number)
                assert.strictEqual(
                  labelOf(turn.events),
                  entry.turn_number,
                  `${where}: turn ${entry.turn_number} numbering`
                )
                const want = crashTurn(SEED, entry.turn_number).turn
                if (acked.has(entry.turn_number)) {
                  assert.deepStrictEqual(turn.events, want, `${where}: acknowledged turn ${entry.turn_number}`)
                } else {
                  // Killed mid-turn: a prefix of the turn survived (a rewrite flushes the open turn's
                  // records). Each later writer that died before its own turn.started re-sent the events it
                  // appends before that turn; they joined this open turn until a turn.started closed it
                  // implicitly (docs/log.md#lifecycle). Only those may follow the prefix.
                  const kept = turn.events.findIndex((e, i) => !isDeepStrictEqual(e, want[i]))
                  const prefix = kept === -1 ? turn.events.length : kept
                  const joinable = crashTurn(SEED, entry.turn_number + 1).outside
                  for (const extra of turn.events.slice(prefix)) {
                    assert.isTrue(
                      joinable.some((e) => isDeepStrictEqual(e, extra)),
                      `${where}: unacknowledged turn ${entry.turn_number} holds ${JSON.stringify(extra)}`
                    )
                  }
                }
              }
              const retained = new Set(index.map((e) => e.turn_number))
              for (const label of acked) {
                if (label >= base) assert.isTrue(retained.has(label), `${where}: acknowledged turn ${label} lost`)
              }
              // No duplicated turn anywhere in the file: labels of turn.started lines strictly increase.
              const events = fileEvents(log.paths.events)
              const labels = events.flatMap((e) => e.type === "turn.started" ? [labelOf([e]) ?? -1] : [])
              for (let i = 1; i < labels.length; i++) {
                assert.isAbove(labels[i] ?? 0, labels[i - 1] ?? 0, `${where}: turn order in the file`)
              }
              // The newest acknowledged snapshot of every matrix survives (retained or as a checkpoint).
              const newestAcked = new Map<string, number>()
              for (const label of acked) {
                const { outside, turn } = crashTurn(SEED, label)
                for (const e of [...outside, ...turn]) noteMatrix(newestAcked, e)
              }
              const inFile = new Map<string, number>()
              for (const e of events) noteMatrix(inFile, e)
              for (const [id, revision] of newestAcked) {
                assert.isAtLeast(inFile.get(id) ?? -1, revision, `${where}: matrix ${id}`)
              }
              evictedSoFar = base - 1
            }).pipe(Effect.provide(storeLayer))
          )
        }
        // The loop really exercised rewrites: at least MIN_ACKS × ITERATIONS turns were acknowledged,
        // far more than the cap retains, whatever the speed of the machine.
        assert.isAtLeast(acked.size, MIN_ACKS * ITERATIONS)
        assert.isAbove(evictedSoFar, 20)
        console.log(`crash loop: ${ITERATIONS} kills, ${acked.size} acknowledged turns, ${evictedSoFar} evicted`)
      }),
    LONG ? 3_600_000 : 300_000
  )
})

const noteMatrix = (acc: Map<string, number>, e: ThreadEvent): void => {
  if (e.type === "matrix.updated") acc.set(e.spec.id, Math.max(acc.get(e.spec.id) ?? -1, e.revision))
}
