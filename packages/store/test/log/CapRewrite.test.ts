/**
 * Cap eviction end to end (docs/log.md#cap-eviction, docs/log.md#summary-hook, docs/differences.md): hysteresis keeps the
 * number of rewrites proportional to turns / (10 % of the cap); the byte budget; the open
 * turn is never evicted; matrix checkpoints survive any number of rewrites; retained turns
 * reconstruct exactly; evicted turns report `TurnEvicted`; a failing summary hook changes
 * nothing; the default hook's digest-named summaries, their counts and their pruning.
 */
import { assert, describe, it } from "@effect/vitest"
import type { ThreadEvent } from "@logbook/domain"
import { encodeLine } from "@logbook/domain"
import { ev as events } from "@logbook/testkit"
import { Effect, Exit, Layer, Stream } from "effect"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { makeSessionFs } from "../../src/fs/internal/fsNode.ts"
import { nodeSys } from "../../src/fs/internal/fsSys.ts"
import type { SessionFsApi } from "../../src/fs/SessionFs.ts"
import { SessionFs } from "../../src/fs/SessionFs.ts"
import { FaultController } from "../../src/fs/SessionFs.ts"
import { StoreIoError } from "../../src/fs/StoreError.ts"
import * as EventLog from "../../src/log/EventLog.ts"
import type { SessionLog } from "../../src/log/EventLog.ts"
import { SessionRegistry } from "../../src/log/SessionRegistry.ts"
import type { EvictedRange, SummaryHook } from "../../src/log/SummaryHook.ts"
import { defaultSummaryHook, MAX_EVICTION_SUMMARIES, SummaryHookFailed } from "../../src/log/SummaryHook.ts"
import {
  assertSessionConsistent,
  defined,
  ev,
  fileEvents,
  labelledTurn,
  labelOf,
  LONG,
  matrixUpdated,
  message,
  recordingHook,
  seededRandom,
  storeLayer,
  summaryFiles,
  tempRoot,
  turnCompleted,
  turnStarted,
  usage
} from "../fixtures/capTestkit.ts"
import { faultyStoreLayer } from "../fixtures/capTestkit.ts"

const appendAll = (log: SessionLog, events: ReadonlyArray<ThreadEvent>) =>
  Effect.forEach(events, (e) => log.append(e), { discard: true })

/** Reconstructs every retained turn and checks it holds exactly the events appended for its label. */
const assertRetainedTurnsIntact = (
  log: SessionLog,
  expected: (label: number) => ReadonlyArray<ThreadEvent>
) =>
  Effect.gen(function*() {
    const entries = yield* log.turnIndex
    for (const entry of entries) {
      const turn = yield* log.reconstructTurn(entry.turn_number)
      assert.strictEqual(labelOf(turn.events), entry.turn_number, `turn ${entry.turn_number} carries its own label`)
      assert.deepStrictEqual(turn.events, expected(entry.turn_number), `turn ${entry.turn_number} is intact`)
      assert.strictEqual(turn.skipped, 0)
    }
    return entries
  })

interface SessionRun {
  readonly rewrites: ReadonlyArray<Omit<EvictedRange, "events">>
  readonly appended: number
  readonly turns: number
}

/**
 * A session of `turns` seeded turns of 2–3 events against `maxEvents`; returns the ranges the
 * hook saw. Checks consistency with a rescan and every retained turn at the end.
 */
const capSession = (options: { turns: number; maxEvents: number; lowWater: number; seed: number }) =>
  Effect.gen(function*() {
    const root = yield* tempRoot("cap-long")
    const { hook, ranges } = recordingHook()
    const rng = seededRandom(options.seed)
    const extras: Array<number> = [0]
    let appended = 0
    const log = yield* EventLog.open({
      sessionsDir: root,
      sessionId: "long",
      maxEvents: options.maxEvents,
      maxBytes: 0,
      evictionLowWater: options.lowWater,
      summaryHook: hook
    })
    for (let label = 1; label <= options.turns; label++) {
      const extra = rng.int(0, 1)
      extras.push(extra)
      const events = labelledTurn(label, extra)
      yield* appendAll(log, events)
      appended += events.length
    }
    const manifest = yield* assertSessionConsistent(log, "end of session")
    yield* assertRetainedTurnsIntact(log, (label) => labelledTurn(label, extras[label] ?? -1))
    // Every line that left event_count went through exactly one hook call.
    const evicted = ranges.reduce((sum, r) => sum + r.countedLines, 0)
    assert.strictEqual(evicted + manifest.event_count, appended)
    assert.isAtMost(manifest.event_count, options.maxEvents)
    // The evicted ranges are contiguous turn ranges ending just before the first retained turn.
    let next = 1
    for (const range of ranges) {
      assert.strictEqual(range.firstTurn, next)
      assert.isAtLeast(range.lastTurn, range.firstTurn)
      next = range.lastTurn + 1
    }
    assert.strictEqual(manifest.retained_turn_base, next)
    assert.strictEqual(manifest.turn_count, options.turns)
    return { rewrites: ranges, appended, turns: options.turns } satisfies SessionRun
  })

describe("CapRewrite", () => {
  describe("hysteresis", () => {
    // Default run: 3 000 turns against maxEvents 300; LOGBOOK_LONG=1: 20 000 turns against 1 000.
    const size = LONG ? { turns: 20_000, maxEvents: 1_000 } : { turns: 3_000, maxEvents: 300 }

    it.effect(
      `a session at the cap rewrites once per ~10 % of the cap (${size.turns} turns, maxEvents ${size.maxEvents})`,
      () =>
        Effect.gen(function*() {
          const run = yield* capSession({ ...size, lowWater: 0.9, seed: 20_260_101 })
          const cap = size.maxEvents
          const target = Math.floor(cap * 0.9)
          const overflow = run.appended - cap
          // After a rewrite at most `target` events remain, so the next one needs more than
          // cap − target new events; a rewrite removes at most cap − target + a turn (3) + 1.
          const upper = 1 + Math.ceil(overflow / (cap - target))
          const lower = Math.floor(overflow / (cap - target + 4))
          const rewrites = run.rewrites.length
          assert.isAtMost(rewrites, upper)
          assert.isAtLeast(rewrites, lower)
          // O(turns / (0.1 × cap)) — nowhere near one rewrite per turn.
          assert.isBelow(rewrites, run.turns / 10)
          console.log(
            `hysteresis: ${run.turns} turns, ${run.appended} events, maxEvents ${cap}: ${rewrites} rewrites ` +
              `(bounds ${lower}..${upper})`
          )
        }).pipe(Effect.provide(storeLayer)),
      LONG ? 600_000 : 60_000
    )

    it.effect("the reference behaviour (low water 1.0) rewrites on nearly every turn at the cap", () =>
      Effect.gen(function*() {
        const turns = 400
        const eager = yield* capSession({ turns, maxEvents: 300, lowWater: 1, seed: 7 })
        const lazy = yield* capSession({ turns, maxEvents: 300, lowWater: 0.9, seed: 7 })
        // Both saw the same events. Turns have at least 2 events, so the cap of 300 is reached by
        // turn 151 at the latest; from then on the eager one rewrites on every turn.
        assert.isAtLeast(eager.rewrites.length, turns - 151)
        assert.isAtMost(lazy.rewrites.length * 8, eager.rewrites.length)
        console.log(`low water 1.0: ${eager.rewrites.length} rewrites; 0.9: ${lazy.rewrites.length} (${turns} turns)`)
      }).pipe(Effect.provide(storeLayer)))

    it.effect("budgets of 0 disable eviction", () =>
      Effect.gen(function*() {
        const root = yield* tempRoot("cap-off")
        const { hook, ranges } = recordingHook()
        const log = yield* EventLog.open({
          sessionsDir: root,
          sessionId: "off",
          maxEvents: 0,
          maxBytes: 0,
          summaryHook: hook
        })
        for (let label = 1; label <= 200; label++) yield* appendAll(log, labelledTurn(label, 1))
        const manifest = yield* assertSessionConsistent(log, "uncapped")
        assert.strictEqual(ranges.length, 0)
        assert.strictEqual(manifest.event_count, 600)
        assert.strictEqual(manifest.retained_turn_base, 1)
      }).pipe(Effect.provide(storeLayer)))
  })

  describe("the open turn", () => {
    it.effect("is never evicted; rewrites stop once only it is left and resume when it closes", () =>
      Effect.gen(function*() {
        const root = yield* tempRoot("cap-open")
        const { hook, ranges } = recordingHook()
        const log = yield* EventLog.open({
          sessionsDir: root,
          sessionId: "open",
          maxEvents: 20,
          maxBytes: 0,
          summaryHook: hook
        })
        for (let label = 1; label <= 5; label++) yield* appendAll(log, labelledTurn(label, 1))
        const open: Array<ThreadEvent> = [turnStarted(6)]
        yield* log.append(turnStarted(6))
        for (let i = 0; i < 40; i++) {
          const m = message(`long turn message ${i}`)
          open.push(m)
          yield* log.append(m)
          if (i === 30) yield* assertSessionConsistent(log, "mid open turn")
        }
        // Every closed turn went; the 40-message open turn stayed, shifted to the file's start.
        const midway = ranges.length
        assert.strictEqual(ranges.at(-1)?.lastTurn, 5)
        const index = yield* log.turnIndex
        assert.deepStrictEqual(index.map((e) => e.turn_number), [6])
        assert.strictEqual(index[0]?.start_offset, 0)
        const reconstructed = yield* log.reconstructTurn(6)
        assert.deepStrictEqual(reconstructed.events, open)
        // Closing it makes it evictable: the file empties and numbering goes on.
        yield* log.append(turnCompleted)
        assert.strictEqual(ranges.length, midway + 1)
        assert.deepStrictEqual([ranges.at(-1)?.firstTurn, ranges.at(-1)?.lastTurn], [6, 6])
        const emptied = yield* assertSessionConsistent(log, "after the open turn closed")
        assert.strictEqual(emptied.persisted_file_len, 0)
        assert.strictEqual(emptied.retained_turn_base, 7)
        assert.strictEqual(emptied.turn_count, 6)
        yield* appendAll(log, labelledTurn(7, 0))
        const after = yield* assertSessionConsistent(log, "next turn")
        assert.strictEqual(after.turn_count, 7)
        assert.deepStrictEqual((yield* log.reconstructTurn(7)).events, labelledTurn(7, 0))
      }).pipe(Effect.provide(storeLayer)))
  })

  describe("byte budget", () => {
    it.effect("a single event larger than maxBytes is evicted with its turn once that turn closes", () =>
      Effect.gen(function*() {
        const root = yield* tempRoot("cap-bytes")
        const { hook, ranges } = recordingHook()
        const maxBytes = 64 * 1024
        const log = yield* EventLog.open({
          sessionsDir: root,
          sessionId: "bytes",
          maxEvents: 0,
          maxBytes,
          summaryHook: hook
        })
        for (let label = 1; label <= 10; label++) yield* appendAll(log, labelledTurn(label, 1))
        assert.strictEqual(ranges.length, 0)
        const huge = message("x".repeat(200 * 1024))
        yield* log.append(turnStarted(11))
        yield* log.append(huge)
        // Over budget while open: every closed turn goes, the huge open turn stays readable.
        assert.strictEqual(ranges.length, 1)
        assert.deepStrictEqual([ranges[0]?.firstTurn, ranges[0]?.lastTurn], [1, 10])
        assert.deepStrictEqual((yield* log.reconstructTurn(11)).events, [turnStarted(11), huge])
        yield* assertSessionConsistent(log, "huge open turn")
        yield* log.append(turnCompleted)
        assert.strictEqual(ranges.length, 2)
        assert.deepStrictEqual([ranges[1]?.firstTurn, ranges[1]?.lastTurn], [11, 11])
        const manifest = yield* assertSessionConsistent(log, "huge turn evicted")
        assert.strictEqual(manifest.persisted_file_len, 0)
        const evicted = yield* Effect.flip(log.reconstructTurn(11))
        assert.strictEqual(evicted._tag, "TurnEvicted")
        yield* appendAll(log, labelledTurn(12, 1))
        const after = yield* assertSessionConsistent(log, "after the huge turn")
        assert.strictEqual(after.retained_turn_base, 12)
        assert.deepStrictEqual((yield* log.reconstructTurn(12)).events, labelledTurn(12, 1))
      }).pipe(Effect.provide(storeLayer)))

    it.effect("keeps the file under maxBytes at every turn boundary, rewriting once per ~10 % of it", () =>
      Effect.gen(function*() {
        const root = yield* tempRoot("cap-bytes2")
        const { hook, ranges } = recordingHook()
        const maxBytes = 16 * 1024
        const log = yield* EventLog.open({
          sessionsDir: root,
          sessionId: "bytes2",
          maxEvents: 0,
          maxBytes,
          summaryHook: hook
        })
        const rng = seededRandom(99)
        const extras: Array<number> = [0]
        let written = 0
        for (let label = 1; label <= 600; label++) {
          const extra = rng.int(0, 2)
          extras.push(extra)
          const events = labelledTurn(label, extra)
          yield* appendAll(log, events)
          written += events.reduce((n, e) => n + encodeLine(e).length + 1, 0)
          assert.isAtMost(fs.statSync(log.paths.events).size, maxBytes, `after turn ${label}`)
        }
        yield* assertSessionConsistent(log, "byte-capped")
        yield* assertRetainedTurnsIntact(log, (label) => labelledTurn(label, extras[label] ?? -1))
        const perRewrite = maxBytes - Math.floor(maxBytes * 0.9)
        assert.isAtMost(ranges.length, 1 + Math.ceil((written - maxBytes) / perRewrite))
        assert.isAtLeast(ranges.length, 10)
        const evictedBytes = ranges.reduce((n, r) => n + r.bytes, 0)
        assert.strictEqual(evictedBytes + fs.statSync(log.paths.events).size, written)
      }).pipe(Effect.provide(storeLayer)))
  })

  describe("streaming", () => {
    it.effect("a rewrite never reads or writes events.jsonl whole: bounded chunks only", () =>
      Effect.gen(function*() {
        const root = yield* tempRoot("cap-stream")
        const real = makeSessionFs(nodeSys, process.pid)
        const isLog = (p: string) => p.endsWith("events.jsonl")
        const seen = { wholeReads: 0, wholeWrites: 0, largestRange: 0, largestChunk: 0, chunks: 0 }
        const watched: SessionFsApi = {
          ...real,
          readFileNoFollow: (p) => {
            if (isLog(p)) seen.wholeReads++
            return real.readFileNoFollow(p)
          },
          writeAtomic: (p, data) => {
            if (isLog(p)) seen.wholeWrites++
            return real.writeAtomic(p, data)
          },
          readRange: (p, start, end) => {
            if (isLog(p)) seen.largestRange = Math.max(seen.largestRange, end - start)
            return real.readRange(p, start, end)
          },
          stream: (p, options) =>
            isLog(p)
              ? real.stream(p, options).pipe(Stream.tap((chunk) =>
                Effect.sync(() => {
                  seen.chunks++
                  seen.largestChunk = Math.max(seen.largestChunk, chunk.length)
                })
              ))
              : real.stream(p, options)
        }
        const layer = Layer.provideMerge(Layer.fresh(SessionRegistry.layer), Layer.succeed(SessionFs, watched))
        const { hook, ranges } = recordingHook()
        const maxBytes = 2 * 1024 * 1024
        yield* Effect.scoped(Effect.gen(function*() {
          const log = yield* EventLog.open({
            sessionsDir: root,
            sessionId: "st",
            maxEvents: 0,
            maxBytes,
            summaryHook: hook
          })
          for (let label = 1; label <= 48; label++) {
            yield* appendAll(log, [turnStarted(label), message(`${label} `.repeat(20_000)), turnCompleted])
          }
          yield* assertSessionConsistent(log, "streamed")
        })).pipe(Effect.provide(layer))
        assert.isAtLeast(ranges.length, 2)
        assert.strictEqual(seen.wholeReads, 0)
        assert.strictEqual(seen.wholeWrites, 0)
        assert.isAtMost(seen.largestRange, 1)
        assert.isAtMost(seen.largestChunk, 256 * 1024)
        // Each rewrite copied the retained ~90 % of the 2 MiB log in 256 KiB chunks.
        assert.isAtLeast(seen.chunks, ranges.length * Math.floor((maxBytes * 0.9) / (256 * 1024)))
      }))
  })

  describe("matrix checkpoints", () => {
    it.effect("the newest snapshot per matrix id survives every rewrite, retained turns stay exact", () =>
      Effect.gen(function*() {
        const root = yield* tempRoot("cap-matrix")
        const { hook, ranges } = recordingHook()
        const log = yield* EventLog.open({
          sessionsDir: root,
          sessionId: "matrix",
          maxEvents: 30,
          maxBytes: 0,
          summaryHook: hook
        })
        const turns = new Map<number, Array<ThreadEvent>>()
        const latest = new Map<string, number>()
        // A model of the file: each line's event and the turn it belongs to (none between turns).
        let model: Array<{ readonly event: ThreadEvent; readonly turn: number | undefined }> = []
        const put = (event: ThreadEvent, turn: number | undefined) =>
          Effect.gen(function*() {
            const rewritesBefore = ranges.length
            if (turn !== undefined) turns.set(turn, [...(turns.get(turn) ?? []), event])
            if (event.type === "matrix.updated") latest.set(event.spec.id, event.revision)
            model.push({ event, turn })
            yield* log.append(event)
            yield* log.flush
            const range = ranges[rewritesBefore]
            if (range !== undefined) {
              // docs/log.md#cap-eviction on the model: cut after the last evicted turn's last line,
              // re-insert the last evicted snapshot per id unless the rest has one, sorted by id.
              const cut = model.findLastIndex((l) => l.turn === range.lastTurn) + 1
              const evicted = model.slice(0, cut)
              const rest = model.slice(cut)
              const kept = new Map<string, ThreadEvent>()
              for (const l of evicted) if (l.event.type === "matrix.updated") kept.set(l.event.spec.id, l.event)
              for (const l of rest) if (l.event.type === "matrix.updated") kept.delete(l.event.spec.id)
              const checkpoints = [...kept.keys()].sort().map((id) => ({
                event: defined(kept.get(id), id),
                turn: undefined
              }))
              model = [...checkpoints, ...rest]
            }
            assert.deepStrictEqual(fileEvents(log.paths.events), model.map((l) => l.event), `after ${event.type}`)
          })
        // "z-once" is written a single time, before any turn: it must be carried forever.
        yield* put(matrixUpdated("z-once", 1), undefined)
        let revision = 1
        for (let label = 1; label <= 80; label++) {
          yield* put(turnStarted(label), label)
          yield* put(message(`turn ${label}`), label)
          if (label % 4 === 0) yield* put(matrixUpdated("m1", ++revision), label)
          yield* put(turnCompleted, label)
          if (label % 7 === 0) yield* put(matrixUpdated("m2", ++revision), undefined)
          if (label === 50) yield* put(matrixUpdated("a-late", ++revision), undefined)
          // Whatever was evicted, the newest revision of every id is in the file.
          const snapshots = fileEvents(log.paths.events).flatMap((e) =>
            e.type === "matrix.updated" ? [[e.spec.id, e.revision] as const] : []
          )
          for (const [id, rev] of latest) {
            assert.include(snapshots.map(([i, r]) => `${i}@${r}`), `${id}@${rev}`, `turn ${label}`)
          }
        }
        assert.isAtLeast(ranges.length, 5)
        assert.isAtLeast(ranges.at(-1)?.firstTurn ?? 0, 50)
        yield* assertSessionConsistent(log, "after matrix rewrites")
        yield* assertRetainedTurnsIntact(log, (label) => turns.get(label) ?? [])
        const evicted = yield* Effect.flip(log.reconstructTurn(defined(ranges[0], "a rewrite").firstTurn))
        assert.strictEqual(evicted._tag, "TurnEvicted")
      }).pipe(Effect.provide(storeLayer)))

    it.effect("a reopen after checkpointed rewrites agrees with a rescan from scratch", () =>
      Effect.gen(function*() {
        const root = yield* tempRoot("cap-matrix-reopen")
        const open = EventLog.open({ sessionsDir: root, sessionId: "mr", maxEvents: 20, maxBytes: 0 })
        const expected = new Map<number, ReadonlyArray<ThreadEvent>>()
        const before = yield* Effect.scoped(Effect.gen(function*() {
          const log = yield* open
          for (let label = 1; label <= 40; label++) {
            yield* log.append(matrixUpdated(`m${label % 3}`, label))
            const events = labelledTurn(label, label % 2)
            expected.set(label, events)
            yield* appendAll(log, events)
          }
          return yield* assertSessionConsistent(log, "before reopen")
        }))
        assert.isAbove(before.retained_turn_base ?? 1, 5)
        // Fast path over the metadata.
        const reopened = yield* Effect.scoped(Effect.gen(function*() {
          const log = yield* open
          yield* assertRetainedTurnsIntact(log, (label) => expected.get(label) ?? [])
          return yield* assertSessionConsistent(log, "fast path")
        }))
        assert.deepStrictEqual(reopened, before)
        // Forced rescan: the index is gone, the manifest's retained base numbers the turns.
        fs.rmSync(path.join(root, "mr", "index", "turns.json"))
        const rescanned = yield* Effect.scoped(Effect.gen(function*() {
          const log = yield* open
          yield* assertRetainedTurnsIntact(log, (label) => expected.get(label) ?? [])
          return yield* assertSessionConsistent(log, "rescan")
        }))
        assert.deepStrictEqual({ ...rescanned, updated_at: "" }, { ...before, updated_at: "" })
      }).pipe(Effect.provide(storeLayer)))
  })

  describe("evicted turns", () => {
    it.effect("reconstructTurn reports TurnEvicted below the retained base and TurnNotFound beyond the log", () =>
      Effect.gen(function*() {
        const root = yield* tempRoot("cap-evicted")
        const log = yield* EventLog.open({ sessionsDir: root, sessionId: "ev", maxEvents: 15, maxBytes: 0 })
        for (let label = 1; label <= 30; label++) yield* appendAll(log, labelledTurn(label, 0))
        const manifest = yield* assertSessionConsistent(log, "evicted")
        const base = manifest.retained_turn_base ?? 1
        assert.isAbove(base, 10)
        for (const n of [1, Math.floor(base / 2), base - 1]) {
          const error = yield* Effect.flip(log.reconstructTurn(n))
          assert.strictEqual(error._tag, "TurnEvicted", `turn ${n}`)
          if (error._tag === "TurnEvicted") assert.strictEqual(error.retainedTurnBase, base)
        }
        for (const n of [0, 31, 1000]) {
          const error = yield* Effect.flip(log.reconstructTurn(n))
          assert.strictEqual(error._tag, "TurnNotFound", `turn ${n}`)
        }
        assert.deepStrictEqual((yield* log.reconstructTurn(base)).events, labelledTurn(base, 0))
      }).pipe(Effect.provide(storeLayer)))

    it.effect("evicting the turn that holds thread.completed keeps the status through a rescan without metadata", () =>
      Effect.gen(function*() {
        const root = yield* tempRoot("cap-status")
        const threadCompleted = events.threadCompleted()
        const open = EventLog.open({ sessionsDir: root, sessionId: "done", maxEvents: 2, maxBytes: 0 })
        const paths = yield* Effect.scoped(Effect.gen(function*() {
          const log = yield* open
          yield* appendAll(log, [turnStarted(1), threadCompleted, turnCompleted])
          const manifest = yield* assertSessionConsistent(log, "after the rewrite")
          assert.strictEqual(manifest.retained_turn_base, 2, "turn 1 was evicted")
          assert.strictEqual(manifest.status, "completed")
          return log.paths
        }))
        fs.rmSync(paths.manifest)
        fs.rmSync(paths.turns)
        const rescanned = yield* Effect.scoped(Effect.flatMap(open, (log) => log.manifest))
        assert.strictEqual(rescanned.status, "completed", "the rescan derives the status the rewrite kept")
        assert.strictEqual(rescanned.event_count, 1, "the kept evidence is one counted record")
      }).pipe(Effect.provide(storeLayer)))
  })

  describe("summary hook failure", () => {
    it.effect("leaves events, index and manifest byte-identical and reaches the caller of append", () =>
      Effect.gen(function*() {
        const root = yield* tempRoot("cap-hookfail")
        const dir = path.join(root, "hf")
        const read = (name: string) => fs.readFileSync(path.join(dir, name))
        let snapshot: { events: Buffer; index: Buffer; manifest: Buffer } | undefined
        let fail = true
        const seen: Array<string> = []
        const hook: SummaryHook = (range) =>
          Effect.gen(function*() {
            seen.push(range.rangeDigest)
            if (!fail) return
            snapshot = {
              events: read("events.jsonl"),
              index: read("index/turns.json"),
              manifest: read("manifest.json")
            }
            return yield* new SummaryHookFailed({ session: range.sessionId, detail: "disk quota" })
          })
        const log = yield* EventLog.open({
          sessionsDir: root,
          sessionId: "hf",
          maxEvents: 10,
          maxBytes: 0,
          summaryHook: hook
        })
        for (let label = 1; label <= 2; label++) yield* appendAll(log, labelledTurn(label, 2))
        yield* appendAll(log, [turnStarted(3), message("turn 3 message 0")])
        const memoryBefore = yield* log.manifest
        // Event 11 (over the cap) is a boundary: metadata is persisted first, then the hook fails.
        const error = yield* Effect.flip(log.append(turnCompleted))
        assert.instanceOf(error, SummaryHookFailed)
        assert.include(error.message, "disk quota")
        assert.isDefined(snapshot)
        if (snapshot === undefined) return
        assert.isTrue(read("events.jsonl").equals(snapshot.events), "events.jsonl unchanged")
        assert.isTrue(read("index/turns.json").equals(snapshot.index), "turns.json unchanged")
        assert.isTrue(read("manifest.json").equals(snapshot.manifest), "manifest.json unchanged")
        assert.isFalse(fs.existsSync(path.join(dir, "index", "pending-cap-rewrite.json")), "no marker")
        assert.deepStrictEqual(fs.readdirSync(path.join(dir, "derived")), [])
        // In memory too: nothing evicted, the event counted, all turns readable.
        const manifest = yield* assertSessionConsistent(log, "after hook failure")
        assert.isTrue(read("manifest.json").equals(snapshot.manifest), "the barrier had nothing left to write")
        assert.strictEqual(manifest.event_count, 11)
        assert.strictEqual(manifest.retained_turn_base, memoryBefore.retained_turn_base)
        assert.deepStrictEqual((yield* log.turnIndex).map((e) => e.turn_number), [1, 2, 3])
        for (let label = 1; label <= 3; label++) {
          assert.deepStrictEqual((yield* log.reconstructTurn(label)).events, labelledTurn(label, label === 3 ? 1 : 2))
        }
        // The next append retries the eviction of the same range (turn 1 alone either way).
        fail = false
        yield* log.append(turnStarted(4))
        assert.strictEqual(seen.length, 2)
        assert.strictEqual(seen[1], seen[0])
        const evicted = yield* assertSessionConsistent(log, "after retry")
        assert.strictEqual(evicted.retained_turn_base, 2)
      }).pipe(Effect.provide(storeLayer)))

    it.effect("in the middle of a turn it changes no metadata; the log only gains the turn's buffered records", () =>
      Effect.gen(function*() {
        const root = yield* tempRoot("cap-hookfail-mid")
        const dir = path.join(root, "hm")
        const read = (name: string) => fs.readFileSync(path.join(dir, name))
        const hook: SummaryHook = (range) =>
          Effect.fail(new SummaryHookFailed({ session: range.sessionId, detail: "no" }))
        const log = yield* EventLog.open({
          sessionsDir: root,
          sessionId: "hm",
          maxEvents: 10,
          maxBytes: 0,
          summaryHook: hook
        })
        for (let label = 1; label <= 3; label++) yield* appendAll(log, labelledTurn(label, 0))
        const open: Array<ThreadEvent> = [turnStarted(4), ...[0, 1, 2].map((i) => message(`turn 4 message ${i}`))]
        yield* appendAll(log, open)
        const before = {
          events: read("events.jsonl"),
          index: read("index/turns.json"),
          manifest: read("manifest.json")
        }
        const trigger = message("turn 4 message 3")
        open.push(trigger)
        const error = yield* Effect.flip(log.append(trigger))
        assert.instanceOf(error, SummaryHookFailed)
        assert.isTrue(read("index/turns.json").equals(before.index), "turns.json unchanged")
        assert.isTrue(read("manifest.json").equals(before.manifest), "manifest.json unchanged")
        const expected = Buffer.concat([before.events, Buffer.from(open.map((e) => encodeLine(e) + "\n").join(""))])
        assert.isTrue(read("events.jsonl").equals(expected), "only turn 4's records were added")
        assert.deepStrictEqual((yield* log.reconstructTurn(4)).events, open)
        const manifest = yield* assertSessionConsistent(log, "after a mid-turn hook failure")
        assert.strictEqual(manifest.retained_turn_base, 1)
        assert.strictEqual(manifest.event_count, 11)
      }).pipe(Effect.provide(storeLayer)))

    it.effect("an I/O error of the hook reaches the caller unchanged", () =>
      Effect.gen(function*() {
        const root = yield* tempRoot("cap-hookio")
        const failure = new StoreIoError({ operation: "hook", path: "/x", code: "ENOSPC", detail: "full" })
        const log = yield* EventLog.open({
          sessionsDir: root,
          sessionId: "hio",
          maxEvents: 5,
          maxBytes: 0,
          summaryHook: () => Effect.fail(failure)
        })
        for (let label = 1; label <= 2; label++) yield* appendAll(log, labelledTurn(label, 0))
        const exit = yield* Effect.exit(appendAll(log, labelledTurn(3, 0)))
        assert.isTrue(Exit.isFailure(exit))
        const error = yield* Effect.flip(log.append(turnStarted(4)))
        assert.strictEqual(error, failure)
        yield* assertSessionConsistent(log, "after hook I/O error")
        assert.strictEqual((yield* log.manifest).retained_turn_base, 1)
      }).pipe(Effect.provide(storeLayer)))
  })

  describe("default summary hook", () => {
    it.effect("names the summary by the evicted range's SHA-256 and reports decoded and countable counts", () =>
      Effect.gen(function*() {
        const root = yield* tempRoot("cap-summary")
        const dir = path.join(root, "sum")
        fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
        // A hand-written start: an out-of-turn line, a countable line that does not decode,
        // a line a scan skips, and a turn with a grounded fact.
        const raw = [
          encodeLine(matrixUpdated("m1", 1)),
          `{"schema_version":"0.18.0","event":{"type":"thread.started","thread_id":"t1"}}`,
          encodeLine(turnStarted(1)),
          `{"schema_version":"0.18.0","event":{"type":"item.completed","item":42}}`,
          `not json at all`,
          encodeLine(message("  first   grounded fact ")),
          encodeLine(ev({ type: "turn.failed", message: "tests failed", usage })),
          ""
        ].join("\n")
        fs.writeFileSync(path.join(dir, "events.jsonl"), raw, { mode: 0o600 })
        const seen: Array<{ range: Omit<EvictedRange, "events">; prefix: Buffer }> = []
        const wrapped = (derived: string): SummaryHook => (range) =>
          Effect.gen(function*() {
            const { events: _events, ...rest } = range
            seen.push({ range: rest, prefix: fs.readFileSync(path.join(dir, "events.jsonl")).subarray(0, range.bytes) })
            yield* defaultSummaryHook(derived)(range)
          })
        const log = yield* EventLog.open({
          sessionsDir: root,
          sessionId: "sum",
          maxEvents: 8,
          maxBytes: 0,
          summaryHook: wrapped(path.join(dir, "derived"))
        })
        const opened = yield* log.manifest
        assert.strictEqual(opened.event_count, 6)
        assert.strictEqual(opened.turn_count, 1)
        for (let label = 2; label <= 4; label++) yield* appendAll(log, labelledTurn(label, 0))
        assert.strictEqual(seen.length, 1)
        const { range, prefix } = defined(seen[0], "a hook call")
        const digest = createHash("sha256").update(prefix).digest("hex")
        assert.strictEqual(range.rangeDigest, digest)
        assert.deepStrictEqual([range.firstTurn, range.lastTurn], [1, 1])
        const name = `eviction-summary-${digest.slice(0, 32)}.json`
        assert.deepStrictEqual(summaryFiles(path.join(dir, "derived")), [name])
        const summary = JSON.parse(fs.readFileSync(path.join(dir, "derived", name), "utf8"))
        // Countable: matrix, thread.started and turn 1's four scan-countable lines.
        assert.strictEqual(range.countedLines, 6)
        // Decoded: the same minus the `item: 42` line (docs/differences.md: both are reported).
        assert.deepStrictEqual(summary, {
          session_id: "sum",
          evicted_event_count: 5,
          event_types: {
            "matrix.updated": 1,
            "thread.started": 1,
            "item.completed": 1,
            "turn.failed": 1,
            "turn.started": 1
          },
          grounded_facts: ["first grounded fact", "tests failed"],
          created_at: summary.created_at,
          evicted_line_count: 6,
          first_turn: 1,
          last_turn: 1
        })
        assert.deepStrictEqual(Object.keys(summary.event_types), Object.keys(summary.event_types).sort())
        assert.match(summary.created_at, /^1970-01-01T00:00:00/)
        assert.strictEqual(fs.statSync(path.join(dir, "derived", name)).mode & 0o777, 0o600)
        const manifest = yield* assertSessionConsistent(log, "after summary")
        // Six events appended after open, six evicted, the matrix checkpoint carried over.
        assert.strictEqual(manifest.event_count, 6 + 6 - 6 + 1)
      }).pipe(Effect.provide(storeLayer)))

    it.effect("a retry after a crash between summary and rewrite rewrites the same summary file", () =>
      Effect.gen(function*() {
        const root = yield* tempRoot("cap-retry")
        const ctl = yield* FaultController
        const derived = path.join(root, "rt", "derived")
        let crashAfterSummary = true
        const hook: SummaryHook = (range) =>
          Effect.gen(function*() {
            yield* defaultSummaryHook(derived)(range)
            if (crashAfterSummary) yield* ctl.crash
          })
        const open = EventLog.open({
          sessionsDir: root,
          sessionId: "rt",
          maxEvents: 10,
          maxBytes: 0,
          summaryHook: hook
        })
        // Turn 1 has 6 events, 2 and 3 have 2: at 11 events turn 1 alone is evicted, whichever
        // event pushes the count over.
        yield* Effect.scoped(Effect.gen(function*() {
          const log = yield* open
          yield* appendAll(log, labelledTurn(1, 4))
          yield* appendAll(log, labelledTurn(2, 0))
          yield* appendAll(log, labelledTurn(3, 0))
          const error = yield* Effect.flip(log.append(turnStarted(4)))
          assert.strictEqual(error._tag, "StoreIoError")
        }))
        const first = summaryFiles(derived)
        assert.strictEqual(first.length, 1)
        yield* ctl.reset
        crashAfterSummary = false
        yield* Effect.scoped(Effect.gen(function*() {
          const log = yield* open
          // The rewrite synced turn 4's start before calling the hook, so it survived.
          const recovered = yield* assertSessionConsistent(log, "after crash")
          assert.strictEqual(recovered.event_count, 11)
          assert.strictEqual(recovered.retained_turn_base, 1)
          yield* log.append(message("turn 4 message 0"))
          const manifest = yield* assertSessionConsistent(log, "after retry")
          assert.strictEqual(manifest.retained_turn_base, 2)
        }))
        assert.deepStrictEqual(summaryFiles(derived), first)
      }).pipe(Effect.provide(faultyStoreLayer())))

    it.effect(`keeps only the newest ${MAX_EVICTION_SUMMARIES} summary files`, () =>
      Effect.gen(function*() {
        const root = yield* tempRoot("cap-prune")
        const derived = path.join(root, "pr", "derived")
        fs.mkdirSync(derived, { recursive: true, mode: 0o700 })
        // 100 older summaries with distinct, old modification times.
        const old = Array.from({ length: MAX_EVICTION_SUMMARIES }, (_, i) => {
          const name = `eviction-summary-${String(i).padStart(32, "0")}.json`
          fs.writeFileSync(path.join(derived, name), "{}", { mode: 0o600 })
          fs.utimesSync(path.join(derived, name), 1_000_000 + i, 1_000_000 + i)
          return name
        })
        fs.writeFileSync(path.join(derived, "memory.json"), "{}")
        const log = yield* EventLog.open({ sessionsDir: root, sessionId: "pr", maxEvents: 6, maxBytes: 0 })
        const digests: Array<string> = []
        let label = 1
        while (digests.length < 3) {
          const before = new Set(summaryFiles(derived))
          yield* appendAll(log, labelledTurn(label++, 0))
          const added = summaryFiles(derived).filter((n) => !before.has(n))
          digests.push(...added)
        }
        // Each rewrite added one and removed the oldest one.
        const now = summaryFiles(derived)
        assert.strictEqual(now.length, MAX_EVICTION_SUMMARIES)
        for (const name of digests) assert.include(now, name)
        for (const name of old.slice(0, digests.length)) assert.notInclude(now, name)
        for (const name of old.slice(digests.length)) assert.include(now, name)
        assert.isTrue(fs.existsSync(path.join(derived, "memory.json")), "other derived files untouched")
      }).pipe(Effect.provide(storeLayer)))
  })
})
