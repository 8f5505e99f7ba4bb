/**
 * EventLog.appendAll: a batch ends in the same file, turn index and manifest as appending its
 * events one by one (cap eviction included), an event that cannot be serialised fails the whole
 * batch before anything is recorded, a batch with a turn boundary is durable when it returns, and
 * `onRecorded` reports each event's offset in the file.
 */
import { assert, describe, it } from "@effect/vitest"
import type { ThreadEvent } from "@logbook/domain"
import { encodeLine } from "@logbook/domain"
import { Arbitrary, Effect, Schema } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import type { OpenOptions, SessionLog } from "../../src/log/EventLog.ts"
import { MAX_WRITE_BUFFER_BYTES } from "../../src/log/internal/writeBuffer.ts"
import { appendAll, ev, nodeLayer, openLog, pathsOf, testRoot, turn } from "../fixtures/eventlogHelpers.ts"
import { assertDiskConsistent, readDisk } from "../fixtures/eventlogOracle.ts"

const lineOf = (e: ThreadEvent): string => encodeLine(e) + "\n"

const Op = Schema.Literals([
  "turn_started",
  "turn_started_at",
  "message",
  "turn_completed",
  "turn_failed",
  "error",
  "thread_started",
  "thread_completed"
])

const eventOf = (op: typeof Op.Type, i: number): ThreadEvent => {
  switch (op) {
    case "turn_started":
      return ev.turnStarted()
    case "turn_started_at":
      return ev.turnStarted(`2026-10-03T09:12:${String(i % 60).padStart(2, "0")}.000Z`)
    case "message":
      return ev.msg(`message ${i} ${"x".repeat(i % 7)}`, `m${i}`)
    case "turn_completed":
      return ev.completed()
    case "turn_failed":
      return ev.failed(`failure ${i}`)
    case "error":
      return ev.error(`error ${i}`)
    case "thread_started":
      return ev.threadStarted()
    case "thread_completed":
      return ev.threadCompleted()
  }
}

// Each op is an event and a number saying whether the batch ends after it (one in eight does).
const opsOf = (minLength: number) =>
  Arbitrary.array(Arbitrary.schema(Schema.Tuple([Op, Schema.Int])), { minLength, maxLength: 80 })
const ops = opsOf(10)
// Long enough to cross a cap of 5 events several times.
const longOps = opsOf(40)

/** Splits the events into batches after every op whose number is 7 modulo 8. */
const batchesOf = (input: ReadonlyArray<readonly [typeof Op.Type, number]>) => {
  const batches: Array<Array<ThreadEvent>> = []
  let current: Array<ThreadEvent> = []
  input.forEach(([op, cut], i) => {
    current.push(eventOf(op, i))
    if (Math.abs(cut) % 8 === 7) {
      batches.push(current)
      current = []
    }
  })
  if (current.length > 0) batches.push(current)
  return batches
}

/** Everything on disk that describes the session after a flush, derived file names included. */
const diskOf = (root: string, id: string) => {
  const paths = pathsOf(root, id)
  const disk = readDisk(paths)
  const turns = fs.readFileSync(paths.turns, "utf8")
  const derived = fs.existsSync(paths.derivedDir) ? fs.readdirSync(paths.derivedDir).sort() : []
  return { bytes: disk.bytes.toString("utf8"), manifest: disk.manifest, turns, derived }
}

const runBoth = (
  batches: ReadonlyArray<ReadonlyArray<ThreadEvent>>,
  options: Partial<OpenOptions>
) =>
  Effect.gen(function*() {
    const { base } = yield* testRoot
    const single = path.join(base, "single")
    const batched = path.join(base, "batched")
    yield* Effect.scoped(Effect.gen(function*() {
      const log = yield* openLog(single, "s", options)
      for (const batch of batches) yield* appendAll(log, batch)
      yield* log.flush
    }))
    yield* Effect.scoped(Effect.gen(function*() {
      const log = yield* openLog(batched, "s", options)
      for (const batch of batches) yield* log.appendAll(batch)
      yield* log.flush
    }))
    return { single: diskOf(single, "s"), batched: diskOf(batched, "s"), batchedPaths: pathsOf(batched, "s") }
  }).pipe(Effect.provide(nodeLayer()))

const flipAppendAll = (log: SessionLog, events: ReadonlyArray<ThreadEvent>) => Effect.flip(log.appendAll(events))

describe("EventLog.appendAll", () => {
  describe("properties", () => {
    it.effect.prop(
      "batches leave the same file, turn index and manifest as appending one by one",
      { ops },
      ({ ops }) =>
        Effect.gen(function*() {
          const { batched, batchedPaths, single } = yield* runBoth(batchesOf(ops), {})
          assert.deepStrictEqual(batched, single)
          assertDiskConsistent(batchedPaths)
        }),
      { timeout: 120_000, arbitrary: { runs: 40 } }
    )

    it.effect.prop(
      "without turn-boundary barriers too, batches leave what appending one by one leaves",
      { ops },
      ({ ops }) =>
        Effect.gen(function*() {
          const { batched, batchedPaths, single } = yield* runBoth(batchesOf(ops), { barrierAtTurnBoundary: false })
          assert.deepStrictEqual(batched, single)
          assertDiskConsistent(batchedPaths)
        }),
      { timeout: 120_000, arbitrary: { runs: 20 } }
    )

    it.effect.prop(
      "with tight caps, batches evict at the same events as single appends",
      { ops: longOps },
      ({ ops }) =>
        Effect.gen(function*() {
          const { batched, batchedPaths, single } = yield* runBoth(batchesOf(ops), { maxEvents: 5, maxBytes: 0 })
          assert.deepStrictEqual(batched, single)
          assertDiskConsistent(batchedPaths)
        }),
      { timeout: 120_000, arbitrary: { runs: 40 } }
    )
  })

  it.effect("one batch crossing the event cap many times evicts where single appends would", () =>
    Effect.gen(function*() {
      const batch = [...turn("a"), ...turn("b"), ...turn("c"), ...turn("d"), ...turn("e"), ...turn("f", "g")]
      const { batched, batchedPaths, single } = yield* runBoth([batch], { maxEvents: 9, maxBytes: 0 })
      assert.isAbove(single.derived.length, 1, "single appends evicted more than once")
      assert.deepStrictEqual(batched, single)
      assertDiskConsistent(batchedPaths)
    }))

  it.effect("an event that cannot be serialised fails the whole batch and records none of it", () =>
    Effect.gen(function*() {
      const { root } = yield* testRoot
      const paths = pathsOf(root, "atomic")
      const log = yield* openLog(root, "atomic")
      yield* log.appendAll([ev.turnStarted(), ev.msg("a")])
      const before = yield* log.manifest
      const indexBefore = yield* log.turnIndex
      const unserialisable = {
        type: "unknown",
        original_type: "vendor.big",
        fields: { n: BigInt(1) }
      } as unknown as ThreadEvent
      const error = yield* flipAppendAll(log, [ev.msg("b"), ev.completed(), unserialisable, ev.msg("c")])
      assert.strictEqual(error._tag, "InvalidEvent")
      assert.strictEqual(error._tag === "InvalidEvent" ? error.operation : "", "appendAll")
      assert.match(error.message, /event 2 of the batch: .*serialise/)
      assert.deepStrictEqual(yield* log.manifest, before)
      assert.deepStrictEqual(yield* log.turnIndex, indexBefore)
      yield* log.appendAll([ev.msg("d"), ev.completed()])
      const disk = assertDiskConsistent(paths)
      assert.strictEqual(
        disk.disk.bytes.toString(),
        [ev.turnStarted(), ev.msg("a"), ev.msg("d"), ev.completed()].map(lineOf).join("")
      )
    }).pipe(Effect.provide(nodeLayer())))

  it.effect("a batch holding a turn boundary is durable when it returns, later events included", () =>
    Effect.gen(function*() {
      const { root } = yield* testRoot
      const paths = pathsOf(root, "durable")
      const log = yield* openLog(root, "durable")
      const events = [...turn("one"), ...turn("two"), ev.turnStarted(), ev.msg("open")]
      yield* log.appendAll(events)
      const disk = assertDiskConsistent(paths)
      assert.strictEqual(disk.disk.bytes.toString(), events.map(lineOf).join(""))
      assert.strictEqual(disk.disk.manifest?.turn_count, 2)
      assert.isTrue(disk.disk.manifest?.in_turn)
      assert.deepStrictEqual((yield* log.reconstructTurn(3)).events, [ev.turnStarted(), ev.msg("open")])
    }).pipe(Effect.provide(nodeLayer())))

  it.effect("a batch without a boundary stays in memory until the next barrier", () =>
    Effect.gen(function*() {
      const { root } = yield* testRoot
      const paths = pathsOf(root, "buffered")
      const log = yield* openLog(root, "buffered")
      yield* log.appendAll(turn("first"))
      const durable = readDisk(paths).bytes.length
      yield* log.appendAll([ev.turnStarted(), ev.msg("waiting")])
      assert.strictEqual(readDisk(paths).bytes.length, durable)
      yield* log.flush
      assert.isAbove(assertDiskConsistent(paths).disk.bytes.length, durable)
    }).pipe(Effect.provide(nodeLayer())))

  it.effect("a batch larger than the buffer writes its bytes every 64 KiB and publishes them at its end", () =>
    Effect.gen(function*() {
      const { root } = yield* testRoot
      const paths = pathsOf(root, "large")
      const log = yield* openLog(root, "large")
      yield* log.appendAll(turn("first"))
      const manifestBefore = readDisk(paths).manifest
      const messages = Array.from({ length: 2_000 }, (_, i) => ev.msg(`message ${i} ${"y".repeat(40)}`, `m${i}`))
      yield* log.appendAll([ev.turnStarted(), ...messages])
      const written = readDisk(paths)
      assert.isAbove(written.bytes.length, MAX_WRITE_BUFFER_BYTES, "bytes reached the file before any barrier")
      assert.deepStrictEqual(written.manifest, manifestBefore, "no barrier ran: the batch has no boundary")
      yield* log.appendAll([ev.completed()])
      const disk = assertDiskConsistent(paths)
      assert.strictEqual(
        disk.disk.bytes.toString(),
        [...turn("first"), ev.turnStarted(), ...messages, ev.completed()].map(lineOf).join("")
      )
    }).pipe(Effect.provide(nodeLayer())))

  it.effect("onRecorded names each event of the batch with the offset its line starts at in the file", () =>
    Effect.gen(function*() {
      const { root } = yield* testRoot
      const paths = pathsOf(root, "offsets")
      const log = yield* openLog(root, "offsets")
      yield* log.appendAll(turn("first"))
      const messages = Array.from({ length: 1_500 }, (_, i) => ev.msg(`message ${i} ${"z".repeat(i % 50)}`, `m${i}`))
      const batch = [ev.turnStarted(), ...messages, ev.completed()]
      const seen: Array<readonly [number, number]> = []
      yield* log.appendAll(batch, (index, offset) => seen.push([index, offset]))
      const bytes = assertDiskConsistent(paths).disk.bytes
      assert.deepStrictEqual(seen.map(([index]) => index), batch.map((_, i) => i))
      let expected = Buffer.byteLength(turn("first").map(lineOf).join(""))
      for (const [index, offset] of seen) {
        const line = lineOf(batch[index] ?? ev.completed())
        assert.strictEqual(offset, expected)
        assert.strictEqual(bytes.subarray(offset, offset + Buffer.byteLength(line)).toString(), line)
        expected += Buffer.byteLength(line)
      }
    }).pipe(Effect.provide(nodeLayer())))

  it.effect("an empty batch records nothing", () =>
    Effect.gen(function*() {
      const { root } = yield* testRoot
      const log = yield* openLog(root, "empty")
      yield* log.appendAll(turn("x"))
      const before = yield* log.manifest
      yield* log.appendAll([])
      assert.deepStrictEqual(yield* log.manifest, before)
    }).pipe(Effect.provide(nodeLayer())))
})
