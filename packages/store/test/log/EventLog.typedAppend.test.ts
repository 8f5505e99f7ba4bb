/**
 * What a typed `append` records is what a rescan reads (issue 33, items 1–2): the encoded line is
 * classified with the scan's own classifier, so a host's cast (a type outside the contract, a
 * lifecycle event missing a field) is refused with `InvalidEvent` naming the field instead of
 * writing a line the scan skips or reads differently. The property appends random typed values —
 * valid, invalid and cast — one by one and in batches, and checks that the handle's in-memory
 * manifest and turn index always equal what the oracle's rescan of the bytes finds.
 */
import { assert, describe, it } from "@effect/vitest"
import type { ThreadEvent } from "@logbook/domain"
import { encodeLine } from "@logbook/domain"
import { Arbitrary, Cause, Effect, Exit, Option, Schema } from "effect"
import * as fs from "node:fs"
import type { SessionLog } from "../../src/log/EventLog.ts"
import { ev, nodeLayer, openLog, pathsOf, testRoot, usage } from "../fixtures/eventlogHelpers.ts"
import { assertDescribes, assertDiskConsistent } from "../fixtures/eventlogOracle.ts"

/** A value a JavaScript host (or TypeScript with a cast) hands to the typed `append`. */
const hostValue = (value: object): ThreadEvent => value as ThreadEvent

const Kind = Schema.Literals([
  "turn_started",
  "turn_started_at",
  "message",
  "turn_completed",
  "turn_failed",
  "thread_started",
  "thread_completed",
  "unknown",
  // Invalid or cast values a rescan would skip or read differently.
  "out_of_contract",
  "turn_failed_no_message",
  "turn_failed_message_42",
  "thread_started_no_id",
  "turn_completed_no_usage",
  "turn_completed_usage_array",
  "turn_completed_usage_bad_count",
  "unknown_as_turn_started",
  "unknown_as_item",
  "unknown_with_type_field",
  "item_without_item",
  "turn_started_bad_context",
  "no_type"
])
type Kind = typeof Kind.Type

const valueOf = (kind: Kind, i: number): ThreadEvent => {
  switch (kind) {
    case "turn_started":
      return ev.turnStarted()
    case "turn_started_at":
      return ev.turnStarted(`2026-10-03T09:12:${String(i % 60).padStart(2, "0")}.000Z`)
    case "message":
      return ev.msg(`message ${i}`, `m${i}`)
    case "turn_completed":
      return ev.completed()
    case "turn_failed":
      return ev.failed(`failure ${i}`)
    case "thread_started":
      return ev.threadStarted()
    case "thread_completed":
      return ev.threadCompleted()
    case "unknown":
      return { type: "unknown", original_type: "vendor.note", fields: { n: i } }
    case "out_of_contract":
      return hostValue({ type: "tool.called", anything: 1 })
    case "turn_failed_no_message":
      return hostValue({ type: "turn.failed" })
    case "turn_failed_message_42":
      return hostValue({ type: "turn.failed", message: 42 })
    case "thread_started_no_id":
      return hostValue({ type: "thread.started" })
    case "turn_completed_no_usage":
      return hostValue({ type: "turn.completed" })
    case "turn_completed_usage_array":
      return hostValue({ type: "turn.completed", usage: [] })
    case "turn_completed_usage_bad_count":
      return hostValue({ type: "turn.completed", usage: { ...usage, output_tokens: -1 } })
    case "unknown_as_turn_started":
      return hostValue({ type: "unknown", original_type: "turn.started", fields: {} })
    case "unknown_as_item":
      return hostValue({ type: "unknown", original_type: "item.started", fields: {} })
    case "unknown_with_type_field":
      return hostValue({ type: "unknown", original_type: "vendor.note", fields: { type: "turn.failed", message: "x" } })
    case "item_without_item":
      return hostValue({ type: "item.completed" })
    case "turn_started_bad_context":
      return hostValue({ type: "turn.started", context: { task_id: 1 } })
    case "no_type":
      return hostValue({ message: "m" })
  }
}

const UNCAPPED = { maxEvents: 0, maxBytes: 0 } as const

/** The handle's in-memory metadata must be exactly what the oracle's rescan of the file finds. */
const assertMemoryMatchesRescan = (log: SessionLog, eventsPath: string, label: string) =>
  Effect.gen(function*() {
    const manifest = yield* log.manifest
    const entries = yield* log.turnIndex
    yield* log.flush
    assertDescribes(fs.readFileSync(eventsPath), manifest, entries, label)
  })

describe("EventLog typed append", () => {
  it.effect("a type outside the contract is refused naming the type, and nothing is written", () =>
    Effect.gen(function*() {
      const { root } = yield* testRoot
      const paths = pathsOf(root, "s")
      const log = yield* openLog(root, "s")
      const error = yield* Effect.flip(log.append(hostValue({ type: "tool.called", anything: 1 })))
      assert.strictEqual(error._tag, "InvalidEvent")
      assert.match(error.message, /type: "tool\.called" is not an event type/)
      yield* log.flush
      assert.strictEqual(fs.readFileSync(paths.events, "utf8"), "")
      assert.strictEqual((yield* log.manifest).event_count, 0)
    }).pipe(Effect.provide(nodeLayer())))

  it.effect("lifecycle events a rescan rejects are refused naming the field", () =>
    Effect.gen(function*() {
      const { root } = yield* testRoot
      const paths = pathsOf(root, "s")
      const log = yield* openLog(root, "s")
      yield* log.append(ev.turnStarted())
      const cases: ReadonlyArray<readonly [object, RegExp]> = [
        [{ type: "turn.failed" }, /\["message"\]/],
        [{ type: "turn.failed", message: 42 }, /\["message"\]/],
        [{ type: "thread.started" }, /\["thread_id"\]/],
        [{ type: "turn.completed" }, /usage/],
        [{ type: "turn.completed", usage: [] }, /usage/],
        [{ type: "unknown", original_type: "turn.started", fields: {} }, /original_type/]
      ]
      for (const [value, field] of cases) {
        const error = yield* Effect.flip(log.append(hostValue(value)))
        assert.strictEqual(error._tag, "InvalidEvent", JSON.stringify(value))
        assert.match(error.message, field, JSON.stringify(value))
        assert.notMatch(error.message, /Cannot read properties/, JSON.stringify(value))
      }
      yield* log.append(ev.completed())
      yield* log.flush
      assert.strictEqual(
        fs.readFileSync(paths.events, "utf8"),
        [ev.turnStarted(), ev.completed()].map((e) => encodeLine(e) + "\n").join("")
      )
      const disk = assertDiskConsistent(paths)
      assert.strictEqual(disk.state.eventCount, 2)
    }).pipe(Effect.provide(nodeLayer())))

  const values = Arbitrary.array(Arbitrary.schema(Schema.Tuple([Kind, Schema.Int])), { minLength: 5, maxLength: 60 })

  it.effect.prop(
    "whatever a host appends one by one, in-memory metadata equals the rescan's",
    { values },
    ({ values }) =>
      Effect.gen(function*() {
        const { root } = yield* testRoot
        const paths = pathsOf(root, "s")
        yield* Effect.scoped(Effect.gen(function*() {
          const log = yield* openLog(root, "s", UNCAPPED)
          for (const [[kind], i] of values.map((v, i) => [v, i] as const)) {
            const exit = yield* Effect.exit(log.append(valueOf(kind, i)))
            if (Exit.isFailure(exit)) {
              const error = Cause.findErrorOption(exit.cause)
              assert.isTrue(
                Option.isSome(error) && error.value._tag === "InvalidEvent",
                `${kind}: ${Cause.pretty(exit.cause)}`
              )
            }
            yield* assertMemoryMatchesRescan(log, paths.events, `after #${i} ${kind}`)
          }
        }))
        // Reopening from the published metadata and from a rescan agree with it too.
        assertDiskConsistent(paths, "after close")
        fs.rmSync(paths.manifest)
        yield* Effect.scoped(Effect.gen(function*() {
          const log = yield* openLog(root, "s", UNCAPPED)
          yield* assertMemoryMatchesRescan(log, paths.events, "after a rescan")
        }))
      }).pipe(Effect.provide(nodeLayer())),
    { timeout: 120_000, arbitrary: { runs: 40 } }
  )

  it.effect.prop(
    "whatever a host appends in batches, in-memory metadata equals the rescan's",
    { values },
    ({ values }) =>
      Effect.gen(function*() {
        const { root } = yield* testRoot
        const paths = pathsOf(root, "s")
        const log = yield* openLog(root, "s", UNCAPPED)
        for (let from = 0; from < values.length; from += 4) {
          const batch = values.slice(from, from + 4).map(([kind], j) => valueOf(kind, from + j))
          yield* Effect.exit(log.appendAll(batch))
          yield* assertMemoryMatchesRescan(log, paths.events, `after the batch at ${from}`)
        }
      }).pipe(Effect.provide(nodeLayer())),
    { timeout: 120_000, arbitrary: { runs: 40 } }
  )
})
