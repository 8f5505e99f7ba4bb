/**
 * Read-only event streams: reading a log with damaged lines, reading a byte range, following a
 * log while a writer appends (a partly written line is held back, never reported), noticing a
 * rewrite, and locating turns that never existed or were evicted.
 */
import { assert, describe, it } from "@effect/vitest"
import type { ThreadEvent } from "@logbook/domain"
import { encodeLine } from "@logbook/domain"
import { EventLog, SessionFs, sessionPaths, SessionRegistry } from "@logbook/store"
import { tempDir } from "@logbook/testkit"
import { Effect, Fiber, Layer, Ref, Stream } from "effect"
import type { Scope } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import type { LogRecord } from "../../src/session/EventStream.ts"
import { followEventRecords, readEventRecords, readTurn } from "../../src/session/EventStream.ts"

const layer = Layer.provideMerge(Layer.fresh(SessionRegistry.layer), SessionFs.layerNode)

const tempRoot: Effect.Effect<string, never, Scope.Scope> = Effect.map(
  tempDir("stream"),
  (base) => path.join(base, "sessions")
)

const usage = { input_tokens: 1, cached_input_tokens: 0, cache_creation_tokens: 0, output_tokens: 1 }
const msg = (text: string): ThreadEvent => ({ type: "item.completed", item: { id: text, type: "agent_message", text } })
const turn = (text: string): ReadonlyArray<ThreadEvent> => [
  { type: "turn.started" },
  msg(text),
  { type: "turn.completed", usage }
]
const line = (e: ThreadEvent): string => encodeLine(e) + "\n"

/** A raw session directory holding exactly `content` as its log. */
const rawSession = (root: string, id: string, content: string) => {
  const paths = sessionPaths(root, id)
  fs.mkdirSync(paths.dir, { recursive: true })
  fs.writeFileSync(paths.events, content)
  return paths
}

const summary = (records: ReadonlyArray<LogRecord>) =>
  records.map((r) =>
    r._tag === "Event"
      ? `event@${r.offset}:${r.event.type}`
      : r._tag === "Skipped"
      ? `${r.kind}@${r.offset}`
      : `rewritten:${r.previousLength}->${r.length}`
  )

/** Polls until `check` holds (the follower runs on its own fiber); fails after a generous bound. */
const eventually = (check: Effect.Effect<boolean>) =>
  Effect.gen(function*() {
    for (let i = 0; i < 500; i++) {
      if (yield* check) return
      yield* Effect.sleep("10 millis")
    }
    return yield* Effect.die(new Error("condition not reached"))
  })

describe("EventStream", () => {
  it.effect("reads every record with its offset, skipping blank lines and reporting damaged ones", () =>
    Effect.gen(function*() {
      const root = yield* tempRoot
      const lines = [
        line({ type: "turn.started" }),
        "garbage\n",
        "\n",
        "{\"schema_version\":\"0.18.0\",\"event\":{\"type\":\"item.completed\",\"item\":{\"id\":\"x\",\"type\":\"hologram\"}}}\n",
        line(msg("a")),
        "{\"schema_version\":\"0.18.0\",\"ev"
      ]
      const at = (i: number) => lines.slice(0, i).join("").length
      const paths = rawSession(root, "s", lines.join(""))
      const records = yield* Stream.runCollect(readEventRecords(paths.events))
      assert.deepStrictEqual(summary(records), [
        `event@${at(0)}:turn.started`,
        `malformed@${at(1)}`,
        `undecodable@${at(3)}`,
        `event@${at(4)}:item.completed`,
        `incomplete@${at(5)}`
      ])
      const first = records[3]
      assert.deepStrictEqual(first?._tag === "Event" ? first.event : undefined, msg("a"))
    }).pipe(Effect.provide(layer)))

  it.effect("a complete last record without its newline is an event, and a byte range reads only its lines", () =>
    Effect.gen(function*() {
      const root = yield* tempRoot
      const a = line(msg("a"))
      const b = line(msg("b"))
      const paths = rawSession(root, "s", a + b + line(msg("c")).trimEnd())
      const all = yield* Stream.runCollect(readEventRecords(paths.events))
      assert.deepStrictEqual(summary(all).map((s) => s.split("@")[0]), ["event", "event", "event"])
      const middle = yield* Stream.runCollect(
        readEventRecords(paths.events, { start: a.length, end: a.length + b.length })
      )
      assert.deepStrictEqual(summary(middle), [`event@${a.length}:item.completed`])
      const missing = yield* Stream.runCollect(readEventRecords(path.join(root, "nope", "events.jsonl")))
      assert.deepStrictEqual(missing, [])
    }).pipe(Effect.provide(layer)))

  it.live("following prints records as they are flushed and holds back a partly written line", () =>
    Effect.gen(function*() {
      const root = yield* tempRoot
      const first = line(msg("first"))
      const paths = rawSession(root, "s", first)
      const seen = yield* Ref.make<ReadonlyArray<LogRecord>>([])
      const fiber = yield* followEventRecords(paths.events, { pollInterval: "10 millis" }).pipe(
        Stream.runForEach((r) => Ref.update(seen, (rs) => [...rs, r])),
        Effect.forkChild
      )
      const count = Effect.map(Ref.get(seen), (rs) => rs.length)
      yield* eventually(Effect.map(count, (n) => n === 1))
      const second = line(msg("second"))
      fs.appendFileSync(paths.events, second.slice(0, 20))
      // Give the follower several polls over the partial line: it must not report it.
      yield* Effect.sleep("100 millis")
      assert.strictEqual(yield* count, 1)
      fs.appendFileSync(paths.events, second.slice(20))
      yield* eventually(Effect.map(count, (n) => n === 2))
      fs.appendFileSync(paths.events, line(msg("third")))
      yield* eventually(Effect.map(count, (n) => n === 3))
      // Replaced atomically, as a cap rewrite does: the follower never sees a half-written file.
      fs.writeFileSync(`${paths.events}.tmp`, line(msg("rewritten")))
      fs.renameSync(`${paths.events}.tmp`, paths.events)
      yield* eventually(Effect.map(count, (n) => n === 4))
      fs.appendFileSync(paths.events, line(msg("after")))
      yield* eventually(Effect.map(count, (n) => n === 5))
      yield* Fiber.interrupt(fiber)
      const records = yield* Ref.get(seen)
      const total = first.length + second.length + line(msg("third")).length
      assert.deepStrictEqual(summary(records), [
        "event@0:item.completed",
        `event@${first.length}:item.completed`,
        `event@${first.length + second.length}:item.completed`,
        `rewritten:${total}->${line(msg("rewritten")).length}`,
        `event@${line(msg("rewritten")).length}:item.completed`
      ])
      assert.strictEqual(records.filter((r) => r._tag === "Skipped").length, 0)
    }).pipe(Effect.provide(layer)))

  it.effect("readTurn streams one turn, and tells never-existing turns from evicted ones", () =>
    Effect.gen(function*() {
      const root = yield* tempRoot
      yield* Effect.scoped(Effect.gen(function*() {
        const log = yield* EventLog.open({ sessionsDir: root, sessionId: "s", maxEvents: 6, evictionLowWater: 1 })
        for (const text of ["one", "two", "three", "four"]) {
          for (const e of turn(text)) yield* log.append(e)
        }
      }))
      const located = yield* readTurn(root, "s", 4)
      const events = yield* Stream.runCollect(located.records)
      assert.deepStrictEqual(events.map((r) => r._tag === "Event" ? r.event : r._tag), [...turn("four")])
      const evicted = yield* Effect.flip(readTurn(root, "s", 1))
      assert.strictEqual(evicted._tag, "TurnEvicted")
      const missing = yield* Effect.flip(readTurn(root, "s", 9))
      assert.strictEqual(missing._tag, "TurnNotFound")
      const zero = yield* Effect.flip(readTurn(root, "s", 0))
      assert.strictEqual(zero._tag, "TurnNotFound")
      const ghost = yield* Effect.flip(readTurn(root, "ghost", 1))
      assert.strictEqual(ghost._tag, "SessionNotFound")
    }).pipe(Effect.provide(layer)))
})
