/**
 * EventLog behaviour on a healthy file system: layout and permissions, buffering until a
 * boundary and at 64 KiB, canonical bytes, validation of untrusted input, reconstruction,
 * snapshots, the time-based flush, turn-index timestamps, nested turns, and two handles
 * sharing one session. Recovery, faults, locks, symlinks and crashes have their own files.
 */
import { assert, describe, it } from "@effect/vitest"
import type { ThreadEvent } from "@logbook/domain"
import { encodeLine, EVENT_SCHEMA_VERSION, formatRfc3339, VersionedThreadEvent } from "@logbook/domain"
import { Deferred, Effect, Fiber, Layer, Schema, Stream } from "effect"
import { TestClock } from "effect/testing"
import * as fs from "node:fs"
import * as path from "node:path"
import { SessionFs } from "../../src/fs/SessionFs.ts"
import type { SessionLog, SnapshotLine } from "../../src/log/EventLog.ts"
import { MAX_WRITE_BUFFER_BYTES } from "../../src/log/internal/writeBuffer.ts"
import { SessionRegistry } from "../../src/log/SessionRegistry.ts"
import {
  appendAll,
  copyDir,
  ev,
  modeOf,
  nodeLayer,
  openLog,
  pathsOf,
  prng,
  testRoot,
  turn,
  usage
} from "../fixtures/eventlogHelpers.ts"
import { assertDescribes, assertDiskConsistent, expectedFromBytes, readDisk } from "../fixtures/eventlogOracle.ts"

const fileSize = (p: string): number => fs.statSync(p).size
const lineOf = (e: ThreadEvent): string => encodeLine(e) + "\n"
const NOW = Date.UTC(2026, 9, 3, 9, 12, 44, 123)

describe("EventLog", () => {
  it.effect("a reopened session keeps its turns and counters", () =>
    Effect.gen(function*() {
      const { root } = yield* testRoot
      yield* Effect.scoped(Effect.gen(function*() {
        const log = yield* openLog(root, "s1")
        yield* appendAll(log, [...turn("one"), ...turn("two")])
      }))
      const manifest = yield* Effect.scoped(Effect.gen(function*() {
        const log = yield* openLog(root, "s1")
        const t = yield* log.reconstructTurn(2)
        assert.deepStrictEqual(t.events, turn("two"))
        return yield* log.manifest
      }))
      assert.strictEqual(manifest.turn_count, 2)
      assert.strictEqual(manifest.event_count, 6)
    }).pipe(Effect.provide(nodeLayer())))

  describe("layout and permissions", () => {
    it.effect("open creates the session tree with private modes and the raw id in the manifest", () =>
      Effect.gen(function*() {
        const { root } = yield* testRoot
        const id = "weird/id ü"
        const paths = pathsOf(root, id)
        yield* Effect.scoped(Effect.gen(function*() {
          const log = yield* openLog(root, id)
          assert.strictEqual(log.paths.dir, paths.dir)
          assert.strictEqual(path.dirname(paths.dir), root, "the session dir is a direct child of the root")
          assert.match(path.basename(paths.dir), /^[A-Za-z0-9_.-]+$/)
          yield* appendAll(log, turn("x"))
          for (const dir of [root, paths.dir, paths.indexDir, paths.derivedDir]) {
            assert.strictEqual(modeOf(dir), 0o700, dir)
          }
          for (const file of [paths.events, paths.manifest, paths.turns, paths.lock]) {
            assert.strictEqual(modeOf(file), 0o600, file)
          }
          assert.strictEqual(fs.readFileSync(paths.lock).length, 0, "session.lock stays empty")
        }))
        assert.strictEqual(readDisk(paths).manifest?.session_id, id)
        const leftovers = [...fs.readdirSync(paths.dir), ...fs.readdirSync(paths.indexDir)].filter((n) =>
          n.endsWith(".tmp")
        )
        assert.deepStrictEqual(leftovers, [], "no temporary files remain")
      }).pipe(Effect.provide(nodeLayer())))

    it.effect("open forces 0700 on the session's existing directories and 0600 on an existing events.jsonl", () =>
      Effect.gen(function*() {
        const { root } = yield* testRoot
        const paths = pathsOf(root, "loose")
        fs.mkdirSync(paths.indexDir, { recursive: true, mode: 0o755 })
        fs.mkdirSync(paths.derivedDir, { mode: 0o755 })
        for (const dir of [root, paths.dir, paths.indexDir, paths.derivedDir]) fs.chmodSync(dir, 0o755)
        fs.writeFileSync(paths.events, lineOf(ev.threadStarted()), { mode: 0o644 })
        fs.chmodSync(paths.events, 0o644)
        yield* Effect.scoped(openLog(root, "loose"))
        assert.strictEqual(modeOf(root), 0o755, "the existing sessions root keeps its mode")
        for (const dir of [paths.dir, paths.indexDir, paths.derivedDir]) {
          assert.strictEqual(modeOf(dir), 0o700, dir)
        }
        assert.strictEqual(modeOf(paths.events), 0o600)
        assert.strictEqual(modeOf(paths.manifest), 0o600)
      }).pipe(Effect.provide(nodeLayer())))
  })

  describe("the sessions root", () => {
    it.effect("an existing shared root (1777) keeps its mode; a root the store creates is 0700", () =>
      Effect.gen(function*() {
        const { base } = yield* testRoot
        const shared = path.join(base, "shared")
        fs.mkdirSync(shared)
        fs.chmodSync(shared, 0o1777)
        yield* Effect.scoped(Effect.gen(function*() {
          yield* appendAll(yield* openLog(shared, "s"), turn("a"))
        }))
        assert.strictEqual(fs.statSync(shared).mode & 0o7777, 0o1777)
        assert.strictEqual(modeOf(pathsOf(shared, "s").dir), 0o700)
        const created = path.join(base, "new", "sessions")
        yield* Effect.scoped(openLog(created, "s"))
        assert.strictEqual(modeOf(created), 0o700)
        assert.strictEqual(modeOf(path.join(base, "new")), 0o700)
      }).pipe(Effect.provide(nodeLayer())))

    it.effect("an existing root this process cannot write into is refused with a message naming it and its mode", () =>
      Effect.gen(function*() {
        const { base } = yield* testRoot
        const readOnly = path.join(base, "read-only")
        fs.mkdirSync(readOnly)
        fs.chmodSync(readOnly, 0o500)
        // Tests may run as root, whom access(2) never refuses: the refusal is injected at that call.
        const error = yield* Effect.flip(Effect.scoped(openLog(readOnly, "s"))).pipe(
          Effect.provide(Layer.provideMerge(
            Layer.fresh(SessionRegistry.layer),
            SessionFs.layerFaulty([{ _tag: "Fail", call: 0, op: "access", code: "EACCES" }])
          ))
        )
        assert.strictEqual(error._tag, "CreateDirError")
        if (error._tag === "CreateDirError") assert.strictEqual(error.code, "EACCES")
        assert.include(error.message, `the sessions root ${readOnly} is not usable`)
        assert.include(error.message, "mode 0500")
        assert.strictEqual(fs.statSync(readOnly).mode & 0o7777, 0o500, "its mode is left alone")
        assert.deepStrictEqual(fs.readdirSync(readOnly), [])
      }))
  })

  describe("buffering", () => {
    it.effect("ordinary appends stay in memory until a turn boundary writes them with their metadata", () =>
      Effect.gen(function*() {
        const { root } = yield* testRoot
        const paths = pathsOf(root, "buf")
        const log = yield* openLog(root, "buf")
        const before = readDisk(paths)
        assert.strictEqual(before.bytes.length, 0)
        assert.strictEqual(before.manifest?.event_count, 0)

        yield* appendAll(log, [ev.threadStarted(), ev.turnStarted(), ev.msg("a"), ev.msg("b"), ev.error()])
        assert.strictEqual(fileSize(paths.events), 0, "nothing written before a boundary")
        assert.strictEqual(readDisk(paths).manifest?.event_count, 0, "metadata untouched before a boundary")
        const inMemory = yield* log.manifest
        assert.strictEqual(inMemory.event_count, 5)
        assert.strictEqual(inMemory.in_turn, true)
        assert.strictEqual(inMemory.persisted_file_len, 0)

        yield* log.append(ev.completed())
        const afterTurn = assertDiskConsistent(paths, "after turn.completed")
        assert.strictEqual(afterTurn.disk.manifest?.event_count, 6)
        assert.strictEqual(afterTurn.disk.manifest?.turn_count, 1)

        yield* appendAll(log, [ev.turnStarted(), ev.msg("c")])
        assert.strictEqual(fileSize(paths.events), afterTurn.disk.bytes.length)
        yield* log.append(ev.failed())
        assert.strictEqual(assertDiskConsistent(paths, "after turn.failed").disk.manifest?.turn_count, 2)

        yield* log.append(ev.msg("between turns"))
        const len = fileSize(paths.events)
        yield* log.append(ev.threadCompleted())
        const done = assertDiskConsistent(paths, "after thread.completed")
        assert.isAbove(done.disk.bytes.length, len, "thread.completed is a boundary")
        assert.strictEqual(done.disk.manifest?.status, "completed")

        yield* log.append(ev.msg("late"))
        assert.strictEqual(fileSize(paths.events), done.disk.bytes.length)
        yield* log.flush
        const flushed = assertDiskConsistent(paths, "after flush")
        assert.strictEqual(flushed.disk.manifest?.event_count, (yield* log.manifest).event_count)
        assert.strictEqual(flushed.disk.manifest?.status, "completed", "flush does not change the status")
      }).pipe(Effect.provide(nodeLayer())))

    it.effect("the buffer is written once it reaches 64 KiB, and a crash then rescans instead of trusting old metadata", () =>
      Effect.gen(function*() {
        const { root, base } = yield* testRoot
        const paths = pathsOf(root, "big")
        const log = yield* openLog(root, "big")
        const events = [ev.turnStarted(), ...Array.from({ length: 14 }, (_, i) => ev.msg(`${i}:${"x".repeat(10_000)}`))]
        let total = 0
        let buffered = 0
        let flushed = 0
        let crossings = 0
        for (const e of events) {
          yield* log.append(e)
          const n = Buffer.byteLength(lineOf(e))
          total += n
          buffered += n
          if (buffered >= MAX_WRITE_BUFFER_BYTES) {
            flushed = total
            buffered = 0
            crossings++
          }
          assert.strictEqual(fileSize(paths.events), flushed, `after ${total} bytes appended`)
        }
        assert.isAtLeast(crossings, 2)
        // Simulate a crash now: a copy of the directory has the flushed bytes but metadata from open.
        const copyRoot = path.join(base, "copy")
        copyDir(paths.dir, pathsOf(copyRoot, "big").dir)
        const stale = readDisk(pathsOf(copyRoot, "big"))
        assert.strictEqual(stale.manifest?.persisted_file_len, 0, "metadata did not move with the bytes")
        assert.strictEqual(stale.bytes.length, flushed)
        const recovered = yield* Effect.scoped(Effect.gen(function*() {
          const copy = yield* openLog(copyRoot, "big")
          return yield* copy.manifest
        })).pipe(Effect.provide(nodeLayer()))
        const expected = expectedFromBytes(stale.bytes, 1)
        assert.strictEqual(recovered.event_count, expected.state.eventCount)
        assert.strictEqual(recovered.in_turn, true)
        assert.strictEqual(recovered.persisted_file_len, flushed)
      }).pipe(Effect.provide(nodeLayer())))

    it.effect("closing the last handle publishes buffered events so the next open needs no rescan", () =>
      Effect.gen(function*() {
        const { root } = yield* testRoot
        const paths = pathsOf(root, "close")
        yield* Effect.scoped(Effect.gen(function*() {
          const log = yield* openLog(root, "close")
          yield* appendAll(log, [...turn("a"), ev.turnStarted(), ev.msg("open")])
        }))
        const after = assertDiskConsistent(paths, "after close")
        assert.strictEqual(after.disk.manifest?.event_count, 5)
        assert.strictEqual(after.disk.manifest?.in_turn, true)
      }).pipe(Effect.provide(nodeLayer())))

    it.effect("complete refreshes updated_at and persists without changing the status", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(NOW)
        const { root } = yield* testRoot
        const paths = pathsOf(root, "complete")
        const log = yield* openLog(root, "complete")
        yield* appendAll(log, [ev.turnStarted(), ev.msg("a")])
        yield* TestClock.adjust("1 hour")
        yield* log.complete
        const disk = assertDiskConsistent(paths, "after complete")
        assert.strictEqual(disk.disk.manifest?.updated_at, formatRfc3339(NOW + 3_600_000))
        assert.strictEqual(disk.disk.manifest?.created_at, formatRfc3339(NOW))
        assert.strictEqual(disk.disk.manifest?.status, "active")
        assert.strictEqual(disk.disk.manifest?.in_turn, true)
      }).pipe(Effect.provide(nodeLayer())))
  })

  describe("canonical bytes", () => {
    it.effect("every written line is byte-identical to the Schema encoding of its envelope", () =>
      Effect.gen(function*() {
        const { root } = yield* testRoot
        const paths = pathsOf(root, "bytes")
        const itemContext = { task_id: "t", turn_id: "u", actor_id: "a", timestamp: "2026-10-03T09:12:44.1+00:00" }
        const events: ReadonlyArray<ThreadEvent> = [
          ev.threadStarted("thread-ü"),
          {
            type: "turn.started",
            token_breakdown: {
              system_prompt_tokens: 1,
              tool_schema_tokens: 2,
              instruction_file_tokens: 3,
              message_history_tokens: 4,
              cache_read_tokens: 5,
              cache_write_tokens: 6,
              cache_miss_tokens: 7
            },
            context: {
              task_id: "t",
              turn_id: "u",
              actor_id: "a",
              origin: "user",
              timestamp: "2026-10-03T09:12:44.1+00:00",
              goal: "g"
            }
          },
          { type: "item.started", item: { context: itemContext, id: "r", type: "reasoning", text: "thinking" } },
          {
            type: "item.updated",
            item: { id: "m", type: "agent_message", text: "quote \" backslash \\ nl \n tab \t" }
          },
          { type: "item.completed", item: { id: "m", type: "agent_message", text: "emoji 🎉, ünïcödé, \u2028" } },
          {
            type: "item.completed",
            item: {
              id: "c",
              type: "command_execution",
              command: "ls",
              arguments: { a: [1, "b"] },
              aggregated_output: "",
              exit_code: -1,
              status: "failed"
            }
          },
          { type: "permission.requested", tool_name: "shell" },
          { type: "unknown", original_type: "vendor.custom", fields: { n: 1, nested: { s: "é" }, arr: [null, true] } },
          { type: "turn.completed", usage, in_progress_exec_sessions: ["exec-1"] },
          ev.threadCompleted({ total_cost_usd: 0.25 })
        ]
        const log = yield* openLog(root, "bytes")
        yield* appendAll(log, events)
        yield* log.flush
        const expected = events.map((event) =>
          JSON.stringify(Schema.encodeSync(VersionedThreadEvent)({ schema_version: EVENT_SCHEMA_VERSION, event })) +
          "\n"
        ).join("")
        assert.strictEqual(fs.readFileSync(paths.events, "utf8"), expected)
        const reconstructed = yield* log.reconstructTurn(1)
        assert.deepStrictEqual(reconstructed.events, events.slice(1, 9))
        assert.strictEqual(reconstructed.skipped, 0)
      }).pipe(Effect.provide(nodeLayer())))
  })

  describe("untrusted input", () => {
    const invalid: ReadonlyArray<readonly [string, unknown, RegExp]> = [
      ["null", null, /type|object/i],
      ["a string", "turn.started", /type|object/i],
      ["an object without type", { usage }, /type/],
      ["a non-string type", { type: 5 }, /type/],
      ["turn.completed without usage", { type: "turn.completed" }, /usage/],
      ["an agent message without text", { type: "item.completed", item: { id: "x", type: "agent_message" } }, /text/],
      [
        "a wrongly typed counter",
        { type: "turn.completed", usage: { ...usage, output_tokens: "many" } },
        /output_tokens/
      ]
    ]
    for (const [name, input, mentions] of invalid) {
      it.effect(`appendUnknown rejects ${name} with an error naming the problem and appends nothing`, () =>
        Effect.gen(function*() {
          const { root } = yield* testRoot
          const paths = pathsOf(root, "untrusted")
          const log = yield* openLog(root, "untrusted")
          yield* appendAll(log, [ev.turnStarted(), ev.msg("kept")])
          const before = yield* log.manifest
          const error = yield* Effect.flip(log.appendUnknown(input))
          assert.strictEqual(error._tag, "InvalidEvent")
          assert.strictEqual(error._tag === "InvalidEvent" ? error.operation : "", "appendUnknown")
          assert.match(error.message, mentions)
          const after = yield* log.manifest
          assert.deepStrictEqual(after, before)
          yield* log.append(ev.completed())
          const disk = assertDiskConsistent(paths)
          assert.strictEqual(
            disk.disk.bytes.toString(),
            [ev.turnStarted(), ev.msg("kept"), ev.completed()].map(lineOf).join("")
          )
        }).pipe(Effect.provide(nodeLayer())))
    }

    it.effect("appendUnknown appends valid input, known or of a foreign type, and returns the decoded event", () =>
      Effect.gen(function*() {
        const { root } = yield* testRoot
        const paths = pathsOf(root, "foreign")
        const log = yield* openLog(root, "foreign")
        const known = yield* log.appendUnknown(JSON.parse("{\"type\":\"turn.started\"}"))
        assert.deepStrictEqual(known, { type: "turn.started" })
        const foreign = yield* log.appendUnknown({ type: "vendor.note", payload: { a: 1 }, list: ["x"] })
        assert.strictEqual(foreign.type, "unknown")
        yield* log.appendUnknown({ type: "turn.completed", usage: { input_tokens: null } })
        assert.strictEqual(
          fs.readFileSync(paths.events, "utf8"),
          "{\"schema_version\":\"0.18.0\",\"event\":{\"type\":\"turn.started\"}}\n" +
            "{\"schema_version\":\"0.18.0\",\"event\":{\"type\":\"vendor.note\",\"payload\":{\"a\":1},\"list\":[\"x\"]}}\n" +
            "{\"schema_version\":\"0.18.0\",\"event\":{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":0," +
            "\"cached_input_tokens\":0,\"cache_creation_tokens\":0,\"output_tokens\":0}}}\n"
        )
        assertDiskConsistent(paths)
        assert.strictEqual((yield* log.reconstructTurn(1)).events.length, 3)
      }).pipe(Effect.provide(nodeLayer())))

    it.effect("an event that cannot be serialised fails with InvalidEvent and leaves the buffer as it was", () =>
      Effect.gen(function*() {
        const { root } = yield* testRoot
        const paths = pathsOf(root, "serialise")
        const log = yield* openLog(root, "serialise")
        yield* appendAll(log, [ev.turnStarted(), ev.msg("a")])
        const before = yield* log.manifest
        const unserialisable = {
          type: "unknown",
          original_type: "vendor.big",
          fields: { n: BigInt(1) }
        } as unknown as ThreadEvent
        const error = yield* Effect.flip(log.append(unserialisable))
        assert.strictEqual(error._tag, "InvalidEvent")
        assert.match(error.message, /serialise/)
        assert.deepStrictEqual(yield* log.manifest, before)
        yield* appendAll(log, [ev.msg("b"), ev.completed()])
        const disk = assertDiskConsistent(paths)
        assert.strictEqual(
          disk.disk.bytes.toString(),
          [ev.turnStarted(), ev.msg("a"), ev.msg("b"), ev.completed()].map(lineOf).join("")
        )
      }).pipe(Effect.provide(nodeLayer())))
  })

  describe("reconstructTurn", () => {
    it.effect("returns closed and open turns in file order and counts undecodable lines as skipped", () =>
      Effect.gen(function*() {
        const { root } = yield* testRoot
        const paths = pathsOf(root, "rec")
        fs.mkdirSync(paths.dir, { recursive: true })
        const undecodable =
          "{\"schema_version\":\"0.18.0\",\"event\":{\"type\":\"item.completed\",\"item\":{\"bogus\":1}}}\n"
        fs.writeFileSync(
          paths.events,
          lineOf(ev.turnStarted()) + lineOf(ev.msg("a")) + undecodable + "not json at all\n" + "\n" +
            lineOf(ev.msg("b")) + lineOf(ev.completed())
        )
        const log = yield* openLog(root, "rec")
        const first = yield* log.reconstructTurn(1)
        assert.deepStrictEqual(first, { turn: 1, events: [...turn("a", "b")], skipped: 2 })
        yield* appendAll(log, [ev.turnStarted(), ev.msg("open")])
        const open = yield* log.reconstructTurn(2)
        assert.deepStrictEqual(open, { turn: 2, events: [ev.turnStarted(), ev.msg("open")], skipped: 0 })
      }).pipe(Effect.provide(nodeLayer())))

    it.effect("fails with TurnNotFound for numbers never recorded", () =>
      Effect.gen(function*() {
        const { root } = yield* testRoot
        const log = yield* openLog(root, "nf")
        yield* appendAll(log, [...turn("a"), ev.turnStarted()])
        for (const n of [0, -1, 3, 4, 1.5, Number.NaN]) {
          const error = yield* Effect.flip(log.reconstructTurn(n))
          assert.strictEqual(error._tag, "TurnNotFound", `turn ${n}`)
          assert.match(error.message, /not found in session nf/)
        }
      }).pipe(Effect.provide(nodeLayer())))

    it.effect("fails with TurnEvicted for numbers below the retained turn base, also after reopen", () =>
      Effect.gen(function*() {
        const { root } = yield* testRoot
        const check = (log: SessionLog) =>
          Effect.gen(function*() {
            const manifest = yield* log.manifest
            assert.strictEqual(manifest.retained_turn_base, 3)
            for (const n of [1, 2]) {
              const error = yield* Effect.flip(log.reconstructTurn(n))
              assert.strictEqual(error._tag, "TurnEvicted", `turn ${n}`)
              assert.deepInclude(error, { turn: n, retainedTurnBase: 3 })
            }
            assert.deepStrictEqual((yield* log.reconstructTurn(3)).events, turn("three"))
            assert.strictEqual((yield* Effect.flip(log.reconstructTurn(5)))._tag, "TurnNotFound")
          })
        yield* Effect.scoped(Effect.gen(function*() {
          const log = yield* openLog(root, "ev", { maxEvents: 5 })
          yield* appendAll(log, [...turn("one"), ...turn("two"), ...turn("three"), ev.turnStarted()])
          yield* check(log)
        }))
        yield* Effect.scoped(Effect.gen(function*() {
          yield* check(yield* openLog(root, "ev", { maxEvents: 5 }))
        }))
        assertDiskConsistent(pathsOf(root, "ev"))
      }).pipe(Effect.provide(nodeLayer())))
  })

  describe("visitSnapshot", () => {
    it.effect("streams every retained line with its offset after a barrier, malformed lines included", () =>
      Effect.gen(function*() {
        const { root } = yield* testRoot
        const paths = pathsOf(root, "snap")
        fs.mkdirSync(paths.dir, { recursive: true })
        fs.writeFileSync(paths.events, lineOf(ev.threadStarted()) + "garbage {\n\n" + lineOf(ev.error()))
        const log = yield* openLog(root, "snap")
        yield* appendAll(log, [ev.turnStarted(), ev.msg("buffered")])
        const lines = yield* Stream.runCollect(log.visitSnapshot)
        const disk = assertDiskConsistent(paths, "after snapshot barrier")
        assert.strictEqual(Buffer.concat(lines.map((l) => l.bytes)).toString(), disk.disk.bytes.toString())
        assert.deepStrictEqual(
          lines.map((l) => l.offset),
          disk.lines.map((l) => l.offset)
        )
        assert.strictEqual(lines.length, 6)
        assert.strictEqual(Buffer.from(lines[1]?.bytes ?? []).toString(), "garbage {\n")
        assert.strictEqual(Buffer.from(lines[5]?.bytes ?? []).toString(), lineOf(ev.msg("buffered")))
      }).pipe(Effect.provide(nodeLayer())))

    it.effect("appends wait until a running snapshot ends", () =>
      Effect.gen(function*() {
        const { root } = yield* testRoot
        const log = yield* openLog(root, "wait")
        yield* appendAll(log, [...turn("a"), ...turn("b")])
        const gate = yield* Deferred.make<void>()
        const seen: Array<SnapshotLine> = []
        const visiting = yield* Effect.forkChild(Stream.runForEach(log.visitSnapshot, (line) =>
          Effect.gen(function*() {
            seen.push(line)
            if (seen.length === 1) yield* Deferred.await(gate)
          })))
        for (let i = 0; i < 1000 && seen.length === 0; i++) yield* Effect.yieldNow
        assert.strictEqual(seen.length, 1, "the visitor started")
        const appending = yield* Effect.forkChild(log.append(ev.msg("late")))
        for (let i = 0; i < 50; i++) yield* Effect.yieldNow
        assert.isUndefined(appending.pollUnsafe(), "the append waits for the snapshot")
        yield* Deferred.succeed(gate, undefined)
        yield* Fiber.join(visiting)
        yield* Fiber.join(appending)
        assert.strictEqual(seen.length, 6, "the snapshot ends where it began")
        assert.strictEqual((yield* log.manifest).event_count, 7)
      }).pipe(Effect.provide(nodeLayer())))
  })

  it.effect("a snapshot abandoned early releases the session for appends", () =>
    Effect.gen(function*() {
      const { root } = yield* testRoot
      const log = yield* openLog(root, "abandon")
      yield* appendAll(log, [...turn("a"), ...turn("b")])
      const first = yield* Stream.runCollect(Stream.take(log.visitSnapshot, 1))
      assert.strictEqual(first.length, 1)
      const failed = yield* Effect.flip(Stream.runForEach(log.visitSnapshot, () => Effect.fail("stop" as const)))
      assert.strictEqual(failed, "stop")
      yield* log.append(ev.turnStarted())
      assert.strictEqual((yield* log.manifest).event_count, 7)
    }).pipe(Effect.provide(nodeLayer())))

  describe("autoFlush", () => {
    it.effect("buffered events reach the disk with their metadata once they waited the interval", () =>
      Effect.gen(function*() {
        const { root } = yield* testRoot
        const paths = pathsOf(root, "auto")
        const log = yield* openLog(root, "auto", { autoFlush: "2 seconds" })
        yield* appendAll(log, [ev.turnStarted(), ev.msg("a")])
        assert.strictEqual(fileSize(paths.events), 0)
        yield* TestClock.adjust("5 seconds")
        const disk = assertDiskConsistent(paths, "after the autoFlush interval")
        assert.strictEqual(disk.disk.manifest?.event_count, 2)
        assert.strictEqual(disk.disk.manifest?.in_turn, true)
      }).pipe(Effect.provide(nodeLayer())))

    it.effect("events already written by the 64 KiB rule are also made durable and described by autoFlush", () =>
      Effect.gen(function*() {
        const { root } = yield* testRoot
        const paths = pathsOf(root, "auto-big")
        const log = yield* openLog(root, "auto-big", { autoFlush: "2 seconds" })
        yield* appendAll(log, [ev.turnStarted(), ev.msg("z".repeat(MAX_WRITE_BUFFER_BYTES))])
        assert.isAbove(fileSize(paths.events), MAX_WRITE_BUFFER_BYTES, "the 64 KiB rule wrote the bytes")
        assert.strictEqual(readDisk(paths).manifest?.persisted_file_len, 0)
        yield* TestClock.adjust("5 seconds")
        const disk = assertDiskConsistent(paths, "after the autoFlush interval")
        assert.strictEqual(disk.disk.manifest?.event_count, 2)
      }).pipe(Effect.provide(nodeLayer())))

    it.effect("without autoFlush buffered events stay in memory however long they wait", () =>
      Effect.gen(function*() {
        const { root } = yield* testRoot
        const paths = pathsOf(root, "manual")
        const log = yield* openLog(root, "manual")
        yield* appendAll(log, [ev.turnStarted(), ev.msg("a")])
        yield* TestClock.adjust("1 hour")
        assert.strictEqual(fileSize(paths.events), 0)
      }).pipe(Effect.provide(nodeLayer())))
  })

  describe("turn-index timestamps", () => {
    it.effect("ts is the recorded context.timestamp when present, else the append time; a rescan keeps recorded ones", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(NOW)
        const { root } = yield* testRoot
        const paths = pathsOf(root, "ts")
        const recorded = "2025-01-02T03:04:05.678901+00:00"
        yield* Effect.scoped(Effect.gen(function*() {
          const log = yield* openLog(root, "ts")
          yield* appendAll(log, [ev.turnStarted(recorded), ev.completed(), ev.turnStarted(), ev.completed()])
          const entries = yield* log.turnIndex
          assert.deepStrictEqual(entries.map((e) => e.ts), [recorded, formatRfc3339(NOW)])
        }))
        fs.rmSync(paths.manifest)
        yield* TestClock.adjust("1 day")
        const rescanned = yield* Effect.scoped(Effect.gen(function*() {
          const log = yield* openLog(root, "ts")
          assert.strictEqual((yield* log.manifest).created_at, recorded, "created_at from the first recorded time")
          return yield* log.turnIndex
        }))
        assert.deepStrictEqual(rescanned.map((e) => e.ts), [recorded, formatRfc3339(NOW + 86_400_000)])
        assertDiskConsistent(paths)
      }).pipe(Effect.provide(nodeLayer())))
  })

  describe("nested turn.started", () => {
    it.effect("a turn.started inside an open turn closes it implicitly and numbering stays contiguous", () =>
      Effect.gen(function*() {
        const { root } = yield* testRoot
        const paths = pathsOf(root, "nested")
        const events = [ev.turnStarted(), ev.msg("a"), ev.turnStarted(), ev.msg("b"), ev.completed()]
        const lens = events.map((e) => Buffer.byteLength(lineOf(e)))
        const at = (i: number) => lens.slice(0, i).reduce((a, b) => a + b, 0)
        yield* Effect.scoped(Effect.gen(function*() {
          const log = yield* openLog(root, "nested")
          yield* appendAll(log, events)
          const entries = yield* log.turnIndex
          assert.deepStrictEqual(entries.map(({ ts: _ts, ...e }) => e), [
            { turn_number: 1, start_offset: 0, end_offset: at(2), event_count: 2 },
            { turn_number: 2, start_offset: at(2), end_offset: at(5), event_count: 3 }
          ])
          assert.strictEqual((yield* log.manifest).turn_count, 2)
          assert.deepStrictEqual((yield* log.reconstructTurn(1)).events, events.slice(0, 2))
          assert.deepStrictEqual((yield* log.reconstructTurn(2)).events, events.slice(2))
        }))
        const fast = assertDiskConsistent(paths, "nested, persisted")
        // The index is consistent, so the next open adopts it; a rescan rebuilds the same one.
        fs.rmSync(paths.manifest)
        yield* Effect.scoped(Effect.gen(function*() {
          const log = yield* openLog(root, "nested")
          yield* appendAll(log, [ev.turnStarted(), ev.msg("c"), ev.turnStarted()])
          yield* log.flush
          const manifest = yield* log.manifest
          assert.strictEqual(manifest.turn_count, 3)
          assert.strictEqual(manifest.in_turn, true)
          assert.deepStrictEqual((yield* log.turnIndex).slice(0, 2), fast.disk.entries)
        }))
        const reopened = assertDiskConsistent(paths, "nested, open at close")
        assert.deepStrictEqual(reopened.entries.map((e) => e.turn_number), [1, 2, 3, 4])
      }).pipe(Effect.provide(nodeLayer())))
  })

  it.effect("concurrent appends from many fibers are serialised: each event written once, the index consistent", () =>
    Effect.gen(function*() {
      const { root } = yield* testRoot
      const paths = pathsOf(root, "concurrent")
      const log = yield* openLog(root, "concurrent")
      yield* log.append(ev.turnStarted())
      const texts = Array.from({ length: 200 }, (_, i) => `c${i}`)
      yield* Effect.forEach(texts, (t) => log.append(ev.msg(t)), { concurrency: "unbounded", discard: true })
      yield* Effect.all([log.append(ev.completed()), log.flush, log.append(ev.turnStarted())], {
        concurrency: "unbounded"
      })
      yield* log.flush
      const disk = assertDiskConsistent(paths)
      const written = disk.lines.flatMap((l) =>
        l.event?.type === "item.completed" && l.event.item.type === "agent_message" ? [l.event.item.text] : []
      )
      assert.deepStrictEqual([...written].sort(), [...texts].sort())
      assert.strictEqual(disk.disk.manifest?.event_count, 203)
    }).pipe(Effect.provide(nodeLayer())))

  describe("sharing", () => {
    it.effect("two handles in one process share counters, numbering and the buffer", () =>
      Effect.gen(function*() {
        const { root } = yield* testRoot
        const paths = pathsOf(root, "shared")
        const a = yield* openLog(root, "shared")
        yield* Effect.scoped(Effect.gen(function*() {
          const b = yield* openLog(root, "shared")
          assert.strictEqual(b.lockState, "exclusive")
          yield* a.append(ev.turnStarted())
          yield* b.append(ev.msg("from b"))
          yield* a.append(ev.completed())
          yield* b.append(ev.turnStarted())
          assert.strictEqual((yield* a.manifest).event_count, 4)
          assert.deepStrictEqual(yield* a.turnIndex, yield* b.turnIndex)
          assert.deepStrictEqual((yield* b.reconstructTurn(1)).events, [...turn("from b")])
        }))
        // Closing one handle neither flushes metadata over the other nor releases the shared state.
        yield* a.append(ev.msg("after b closed"))
        yield* a.append(ev.completed())
        assert.strictEqual(a.lockState, "exclusive")
        assert.deepStrictEqual((yield* a.reconstructTurn(2)).events, [...turn("after b closed")])
        const disk = assertDiskConsistent(paths)
        assert.strictEqual(disk.disk.manifest?.turn_count, 2)
      }).pipe(Effect.provide(nodeLayer())))

    it.effect("two spellings of the same sessions root share one state", () =>
      Effect.gen(function*() {
        const { base } = yield* testRoot
        const root = path.join(base, "real", "sessions")
        fs.mkdirSync(root, { recursive: true })
        fs.symlinkSync(path.join(base, "real"), path.join(base, "link"))
        const a = yield* openLog(root, "s")
        const b = yield* openLog(path.join(base, "link", "sessions"), "s")
        // (A relative spelling would climb out of the working directory with `..`, which is refused.)
        const c = yield* openLog(root + "/./", "s")
        yield* a.append(ev.turnStarted())
        yield* b.append(ev.msg("b"))
        yield* c.append(ev.completed())
        yield* c.append(ev.turnStarted())
        yield* b.append(ev.completed())
        assert.deepStrictEqual((yield* a.turnIndex).map((e) => e.turn_number), [1, 2])
        assert.strictEqual((yield* b.manifest).event_count, 5)
        assertDiskConsistent(pathsOf(root, "s"))
      }).pipe(Effect.provide(nodeLayer())))
  })

  it.effect("seeded random sequences give the same state through append and through a rescan", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(NOW)
      const { root } = yield* testRoot
      const rng = prng(7)
      const alphabet: ReadonlyArray<() => ThreadEvent> = [
        () => ev.turnStarted(),
        () => ev.turnStarted(`2026-01-0${rng.int(1, 9)}T00:00:00Z`),
        () => ev.msg(`m${rng.int(0, 999)}`),
        () => ev.msg(`m${rng.int(0, 999)}`),
        () => ev.completed(),
        () => ev.failed(),
        () => ev.threadStarted(),
        () => ev.threadCompleted(),
        () => ev.error(),
        () => ({ type: "unknown", original_type: "vendor.x", fields: { n: rng.int(0, 9) } }),
        () => ({
          type: "turn.blocked",
          message: "fuse",
          blocked_streak: 1,
          blocked_total: 2,
          consecutive_cap: 3,
          total_cap: 4,
          recovery_active: false
        })
      ]
      for (let round = 0; round < 20; round++) {
        const id = `replay-${round}`
        const paths = pathsOf(root, id)
        const events = Array.from(
          { length: rng.int(0, 60) },
          () => alphabet[rng.int(0, alphabet.length - 1)]?.() ?? ev.error()
        )
        const appended = yield* Effect.scoped(Effect.gen(function*() {
          const log = yield* openLog(root, id)
          yield* appendAll(log, events)
          yield* log.flush
          const manifest = yield* log.manifest
          const entries = yield* log.turnIndex
          const expected = assertDescribes(fs.readFileSync(paths.events), manifest, entries, `round ${round}, append`)
          for (const entry of entries) {
            const inTurn = expected.lines.filter((l) => l.offset >= entry.start_offset && l.offset < entry.end_offset)
            const rebuilt = yield* log.reconstructTurn(entry.turn_number)
            assert.deepStrictEqual(
              rebuilt.events,
              inTurn.flatMap((l) => l.event === undefined ? [] : [l.event]),
              `round ${round}, turn ${entry.turn_number}`
            )
          }
          return { manifest, entries }
        }))
        fs.rmSync(paths.manifest)
        const rescanned = yield* Effect.scoped(Effect.gen(function*() {
          const log = yield* openLog(root, id)
          return { manifest: yield* log.manifest, entries: yield* log.turnIndex }
        }))
        const strip = (m: typeof appended.manifest) => ({ ...m, created_at: "", updated_at: "" })
        assert.deepStrictEqual(strip(rescanned.manifest), strip(appended.manifest), `round ${round}, manifest`)
        assert.deepStrictEqual(rescanned.entries, appended.entries, `round ${round}, index`)
      }
    }).pipe(Effect.provide(nodeLayer())))

  it.effect("thread.completed makes the session completed and a later turn.started makes it active again", () =>
    Effect.gen(function*() {
      const { root } = yield* testRoot
      const paths = pathsOf(root, "resume")
      const log = yield* openLog(root, "resume")
      yield* appendAll(log, [ev.threadStarted(), ...turn("a"), ev.threadCompleted()])
      assert.strictEqual(readDisk(paths).manifest?.status, "completed")
      yield* log.append(ev.turnStarted())
      assert.strictEqual((yield* log.manifest).status, "active")
      yield* log.flush
      const disk = assertDiskConsistent(paths)
      assertDescribes(disk.disk.bytes, yield* log.manifest, yield* log.turnIndex, "in memory")
    }).pipe(Effect.provide(nodeLayer())))
})
