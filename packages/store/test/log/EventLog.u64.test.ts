/**
 * Token counts beyond 2^53 (docs/format-notes.md#u64-counts): a log written by VT Code may hold
 * any u64 count, up to 18446744073709551615. Such a turn boundary opens, closes and numbers its
 * turn exactly as VT Code's scan does (a count above u64's maximum is skipped, as there); the
 * library refuses to append a count it cannot write exactly; a cap rewrite copies such lines
 * byte for byte.
 */
import { assert, describe, it } from "@effect/vitest"
import { encodeLine } from "@logbook/domain"
import { Effect, Exit } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { appendAll, ev, nodeLayer, openLog, pathsOf, testRoot } from "../fixtures/eventlogHelpers.ts"
import { assertDiskConsistent } from "../fixtures/eventlogOracle.ts"

/** A hand-written `turn.completed` line whose input_tokens is the literal `tokens`. */
const completedWith = (tokens: string): string =>
  `{"schema_version":"0.18.0","event":{"type":"turn.completed","usage":{"input_tokens":${tokens},` +
  `"cached_input_tokens":0,"cache_creation_tokens":0,"output_tokens":7}}}\n`

const line = (event: Parameters<typeof encodeLine>[0]): string => encodeLine(event) + "\n"

const BEYOND_2_53 = completedWith("9007199254740993")
const U64_MAX = completedWith("18446744073709551615")
const ABOVE_U64 = completedWith("18446744073709551616")

/** thread.started; turn 1 closed by a count beyond 2^53; turn 2 by u64's maximum; turn 3 left open by a count above it. */
const vtcodeLog = line(ev.threadStarted()) +
  line(ev.turnStarted()) + line(ev.msg("one")) + BEYOND_2_53 +
  line(ev.turnStarted()) + U64_MAX +
  line(ev.turnStarted()) + line(ev.msg("three")) + ABOVE_U64

/** Writes `events.jsonl` of session `id` by hand, with no metadata, as another tool could have left it. */
const plant = (root: string, id: string, events: string) => {
  const paths = pathsOf(root, id)
  fs.mkdirSync(paths.dir, { recursive: true, mode: 0o700 })
  fs.writeFileSync(paths.events, events, { mode: 0o600 })
  return paths
}

describe("EventLog with u64 token counts", () => {
  it.effect("a log with counts beyond 2^53 opens with their turns counted, as VT Code counts them", () =>
    Effect.gen(function*() {
      const { root } = yield* testRoot
      const paths = plant(root, "vt", vtcodeLog)
      const opened = yield* Effect.scoped(Effect.gen(function*() {
        const log = yield* openLog(root, "vt")
        const manifest = yield* log.manifest
        const entries = yield* log.turnIndex
        const first = yield* log.reconstructTurn(1)
        const second = yield* log.reconstructTurn(2)
        return { manifest, entries, first, second }
      }))
      // Turns 1 and 2 are closed by their turn.completed; the line above u64's maximum is skipped.
      assert.deepStrictEqual(opened.entries.map((e) => [e.turn_number, e.event_count]), [[1, 3], [2, 2], [3, 2]])
      assert.strictEqual(opened.manifest.turn_count, 2, "the last closed turn")
      assert.strictEqual(opened.manifest.event_count, 8)
      assert.isTrue(opened.manifest.in_turn)
      const boundary = opened.first.events.at(-1)
      assert.strictEqual(boundary?.type === "turn.completed" ? boundary.usage.input_tokens : 0, 9007199254740992)
      const top = opened.second.events.at(-1)
      assert.strictEqual(top?.type === "turn.completed" ? top.usage.input_tokens : 0, 2 ** 64)
      // The persisted metadata equals an independent rescan of the bytes, and the bytes are untouched.
      const expected = assertDiskConsistent(paths, "after open")
      assert.strictEqual(expected.malformed, 1, "only the count above u64's maximum is skipped")
      assert.strictEqual(fs.readFileSync(paths.events, "utf8"), vtcodeLog)
      // A second open (fast path) and a rescan without metadata agree.
      fs.rmSync(paths.manifest)
      fs.rmSync(paths.turns)
      const rescanned = yield* Effect.scoped(Effect.flatMap(openLog(root, "vt"), (log) => log.turnIndex))
      assert.deepStrictEqual(rescanned, opened.entries)
    }).pipe(Effect.provide(nodeLayer())))

  it.effect("appending a count beyond 2^53 - 1 fails with InvalidEvent and appends nothing", () =>
    Effect.gen(function*() {
      const { root } = yield* testRoot
      const usage = { input_tokens: 2 ** 53, cached_input_tokens: 0, cache_creation_tokens: 0, output_tokens: 0 }
      const size = yield* Effect.scoped(Effect.gen(function*() {
        const log = yield* openLog(root, "w")
        yield* appendAll(log, [ev.turnStarted(), ev.msg("m")])
        yield* log.flush
        const before = fs.statSync(log.paths.events).size
        const typed = yield* Effect.exit(log.append({ type: "turn.completed", usage }))
        const untrusted = yield* Effect.exit(log.appendUnknown({
          type: "turn.completed",
          usage: { ...usage, input_tokens: 1, output_tokens: 2 ** 60 }
        }))
        const failures = [
          Exit.isFailure(typed) ? String(typed.cause) : "succeeded",
          Exit.isFailure(untrusted) ? String(untrusted.cause) : "succeeded"
        ]
        assert.include(failures[0], "InvalidEvent")
        assert.include(failures[0], "input_tokens is 9007199254740992")
        assert.include(failures[1], "InvalidEvent")
        assert.include(failures[1], "output_tokens is 1152921504606847000")
        yield* log.append(ev.completed())
        yield* log.flush
        assert.strictEqual((yield* log.manifest).event_count, 3, "only the valid events were appended")
        return before
      }))
      const bytes = fs.readFileSync(pathsOf(root, "w").events, "utf8")
      assert.strictEqual(bytes.length, size + line(ev.completed()).length)
      assert.notInclude(bytes, "9007199254740992")
    }).pipe(Effect.provide(nodeLayer())))

  it.effect("a cap rewrite keeps a retained line with such a count byte for byte", () =>
    Effect.gen(function*() {
      const { root } = yield* testRoot
      const retained = line(ev.turnStarted()) + line(ev.msg("kept")) + BEYOND_2_53
      const paths = plant(root, "cap", line(ev.turnStarted()) + line(ev.msg("old")) + U64_MAX + retained)
      yield* Effect.scoped(Effect.gen(function*() {
        const log = yield* openLog(root, "cap", { maxEvents: 7, maxBytes: 0 })
        yield* appendAll(log, [ev.turnStarted(), ev.msg("new")])
        yield* log.flush
        const manifest = yield* log.manifest
        assert.strictEqual(manifest.retained_turn_base, 2, "turn 1 was evicted")
        assert.strictEqual(manifest.event_count, 5)
      }))
      const after = fs.readFileSync(paths.events, "utf8")
      assert.strictEqual(after, retained + line(ev.turnStarted()) + line(ev.msg("new")))
      assertDiskConsistent(paths, "after the rewrite")
      const summaries = fs.readdirSync(path.join(paths.dir, "derived")).filter((n) => n.startsWith("eviction-summary-"))
      assert.strictEqual(summaries.length, 1, "the evicted turn with u64's maximum was summarised")
    }).pipe(Effect.provide(nodeLayer())))
})
