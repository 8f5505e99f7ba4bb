/**
 * EventLog open paths (docs/log.md#open): the O(1) fast path over valid metadata, the rescan for
 * every fast-path condition of docs/log.md#open, cap-marker handling on open, torn-tail repair,
 * truncation at every byte of the last two lines, and zero-filled or garbage tails. Every
 * outcome is checked against the independent oracle in `fixtures/eventlogOracle.ts`.
 */
import { assert, describe, it } from "@effect/vitest"
import type { ThreadEvent } from "@logbook/domain"
import { encodeLine } from "@logbook/domain"
import { Effect, Stream } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { FaultController } from "../../src/fs/SessionFs.ts"
import type { SessionPaths } from "../../src/log/SessionPaths.ts"
import {
  appendAll,
  copyDir,
  editJson,
  ev,
  faultyLayer,
  nodeLayer,
  openLog,
  pathsOf,
  prng,
  testRoot,
  turn
} from "../fixtures/eventlogHelpers.ts"
import type { Expected } from "../fixtures/eventlogOracle.ts"
import {
  assertDescribes,
  assertDiskConsistent,
  decodedEvents,
  expectedFromBytes,
  readDisk,
  splitRaw
} from "../fixtures/eventlogOracle.ts"

const lineOf = (e: ThreadEvent): string => encodeLine(e) + "\n"
const POISON = 999_999

/** thread.started, a closed turn, a failed turn with a recorded timestamp, and an open turn. */
const referenceEvents: ReadonlyArray<ThreadEvent> = [
  ev.threadStarted(),
  ...turn("one", "uno"),
  ev.turnStarted("2025-05-05T05:05:05.5+00:00"),
  ev.msg("two"),
  ev.failed(),
  ev.turnStarted(),
  ev.msg("three")
]

/** Writes the reference session through the API and closes it (metadata describes the file). */
const buildReference = (root: string, id: string) =>
  Effect.scoped(Effect.gen(function*() {
    const log = yield* openLog(root, id)
    yield* appendAll(log, referenceEvents)
  }))

/** Opens, checks the in-memory state against a rescan of the bytes, closes; returns the manifest. */
const openAndCheck = (root: string, id: string, label: string) =>
  Effect.scoped(Effect.gen(function*() {
    const log = yield* openLog(root, id)
    const manifest = yield* log.manifest
    const entries = yield* log.turnIndex
    const bytes = fs.readFileSync(log.paths.events)
    assertDescribes(bytes, manifest, entries, label)
    assert.strictEqual(manifest.persisted_file_len, bytes.length, `${label}: persisted_file_len`)
    return manifest
  }))

const setManifest = (paths: SessionPaths, patch: Record<string, unknown>) =>
  editJson(paths.manifest, (m) => ({ ...m, ...patch }))

const dropManifestKey = (paths: SessionPaths, key: string) =>
  editJson(paths.manifest, (m) => Object.fromEntries(Object.entries(m).filter(([k]) => k !== key)))

type Entries = Array<Record<string, number | string>>

const editIndex = (paths: SessionPaths, edit: (entries: Entries) => unknown) =>
  editJson(paths.turns, (i) => ({ entries: edit(i.entries as Entries) }))

describe("EventLog open", () => {
  it.effect("valid metadata is adopted as-is without reading the log", () =>
    Effect.gen(function*() {
      const { root } = yield* testRoot
      const paths = pathsOf(root, "fast")
      yield* buildReference(root, "fast")
      const before = readDisk(paths)
      // Counters the bytes do not support: only a fast path can report them.
      setManifest(paths, { event_count: POISON })
      const manifest = yield* Effect.scoped(Effect.gen(function*() {
        const log = yield* openLog(root, "fast")
        assert.deepStrictEqual(yield* log.turnIndex, before.entries)
        return yield* log.manifest
      }))
      assert.strictEqual(manifest.event_count, POISON)
      assert.strictEqual(manifest.turn_count, 2)
      assert.strictEqual(manifest.in_turn, true)
      assert.deepStrictEqual(readDisk(paths).bytes, before.bytes, "the log is untouched")
    }).pipe(Effect.provide(nodeLayer())))

  it.effect("the fast path reads the same few bytes whatever the size of the log", () =>
    Effect.gen(function*() {
      const { root } = yield* testRoot
      const faults = yield* FaultController
      const big = "y".repeat(100_000)
      yield* Effect.scoped(Effect.gen(function*() {
        yield* appendAll(yield* openLog(root, "small"), turn("s"))
        const log = yield* openLog(root, "large")
        for (let i = 0; i < 40; i++) yield* appendAll(log, turn(big, `${i}`))
      }))
      assert.isAbove(fs.statSync(pathsOf(root, "large").events).size, 4_000_000)
      const readsOfOpen = (id: string) =>
        Effect.gen(function*() {
          yield* faults.reset
          yield* Effect.scoped(openLog(root, id))
          return (yield* faults.callsByOp).get("read") ?? 0
        })
      const small = yield* readsOfOpen("small")
      const large = yield* readsOfOpen("large")
      assert.strictEqual(large, small, "fast-path reads do not depend on the log size")
      fs.rmSync(pathsOf(root, "large").manifest)
      const rescan = yield* readsOfOpen("large")
      assert.isAbove(rescan, large + 10, "a rescan of the large log is visible in the read count")
    }).pipe(Effect.provide(faultyLayer())))

  describe("rescans on every invalidating condition", () => {
    const conditions: ReadonlyArray<readonly [string, (p: SessionPaths) => void, boolean?]> = [
      ["manifest.json is missing", (p) => fs.rmSync(p.manifest)],
      ["manifest.json is empty", (p) => fs.writeFileSync(p.manifest, "")],
      ["manifest.json is not JSON", (p) => fs.writeFileSync(p.manifest, "{\"session_id\":")],
      ["manifest.json lacks a required field", (p) => dropManifestKey(p, "status")],
      ["manifest.json has a wrongly typed field", (p) => setManifest(p, { turn_count: "2" })],
      ["manifest.json has a negative counter", (p) => setManifest(p, { event_count: -1 })],
      ["index/turns.json is missing", (p) => {
        setManifest(p, { event_count: POISON })
        fs.rmSync(p.turns)
      }],
      ["index/turns.json is not JSON", (p) => {
        setManifest(p, { event_count: POISON })
        fs.writeFileSync(p.turns, "[")
      }],
      ["index/turns.json has entries of the wrong shape", (p) => {
        setManifest(p, { event_count: POISON })
        fs.writeFileSync(p.turns, "{\"entries\":[{\"turn_number\":1}]}")
      }],
      ["the manifest has no in_turn", (p) => {
        setManifest(p, { event_count: POISON })
        dropManifestKey(p, "in_turn")
      }],
      ["the manifest has no persisted_file_len", (p) => {
        setManifest(p, { event_count: POISON })
        dropManifestKey(p, "persisted_file_len")
      }],
      ["persisted_file_len is shorter than the file (unannounced bytes)", (p) => {
        setManifest(p, { event_count: POISON })
        fs.appendFileSync(p.events, lineOf(ev.msg("unannounced")) + lineOf(ev.completed()))
      }],
      ["persisted_file_len is longer than the file", (p) => {
        setManifest(p, { event_count: POISON, persisted_file_len: fs.statSync(p.events).size + 1 })
      }],
      ["an index entry ends past the end of the file", (p) => {
        setManifest(p, { event_count: POISON })
        editIndex(p, (es) => es.map((e, i) => i === es.length - 1 ? { ...e, end_offset: Number(e.end_offset) + 5 } : e))
      }],
      ["an index entry starts past its end", (p) => {
        setManifest(p, { event_count: POISON })
        editIndex(p, (es) => es.map((e, i) => i === 1 ? { ...e, start_offset: Number(e.end_offset) + 1 } : e))
      }],
      ["index entries overlap", (p) => {
        setManifest(p, { event_count: POISON })
        editIndex(p, (es) => es.map((e, i) => i === 1 ? { ...e, start_offset: Number(e.start_offset) - 1 } : e))
      }],
      ["an index entry counts no events", (p) => {
        setManifest(p, { event_count: POISON })
        editIndex(p, (es) => es.map((e, i) => i === 0 ? { ...e, event_count: 0 } : e))
      }],
      ["index turn numbers have a gap", (p) => {
        setManifest(p, { event_count: POISON })
        editIndex(p, (es) => es.map((e, i) => i === 0 ? { ...e, turn_number: 0 } : e))
      }],
      ["the first index turn is not the retained base", (p) => {
        // The manifest's retained_turn_base is authoritative for the rescan (docs/log.md#turn-base rule 3).
        setManifest(p, { event_count: POISON, retained_turn_base: 2 })
      }, false],
      ["the last index turn does not match turn_count", (p) => {
        setManifest(p, { event_count: POISON, turn_count: 3 })
      }],
      ["the manifest says no turn is open but the index ends with one", (p) => {
        setManifest(p, { event_count: POISON, in_turn: false })
      }],
      ["events.jsonl was deleted", (p) => fs.rmSync(p.events), false],
      ["the index is empty while turns were recorded", (p) => {
        setManifest(p, { event_count: POISON })
        fs.writeFileSync(p.turns, "{\"entries\":[]}")
      }]
    ]
    for (const [name, damage, keepsNumbering = true] of conditions) {
      it.effect(`${name}: open rescans, rebuilds the truth and republishes metadata`, () =>
        Effect.gen(function*() {
          const { root } = yield* testRoot
          const paths = pathsOf(root, "re")
          yield* buildReference(root, "re")
          const truth = readDisk(paths)
          damage(paths)
          const manifest = yield* openAndCheck(root, "re", name)
          assert.notStrictEqual(manifest.event_count, POISON)
          assert.strictEqual(manifest.session_id, "re")
          const after = assertDiskConsistent(paths, name)
          if (keepsNumbering && fs.statSync(paths.events).size === truth.bytes.length) {
            assert.deepStrictEqual(
              after.disk.entries?.map(({ ts: _ts, ...e }) => e),
              truth.entries?.map(({ ts: _ts, ...e }) => e)
            )
            assert.strictEqual(after.disk.manifest?.event_count, truth.manifest?.event_count)
          }
          // The republished metadata is trusted by the next open.
          setManifest(paths, { event_count: POISON })
          assert.strictEqual(
            (yield* Effect.scoped(Effect.flatMap(openLog(root, "re"), (l) => l.manifest))).event_count,
            POISON
          )
        }).pipe(Effect.provide(nodeLayer())))
    }
  })

  describe("cap marker on open", () => {
    it.effect("a marker matching the file sets the turn base of the rescan and is removed", () =>
      Effect.gen(function*() {
        const { root } = yield* testRoot
        const paths = pathsOf(root, "mk")
        yield* buildReference(root, "mk")
        const len = fs.statSync(paths.events).size
        fs.writeFileSync(
          paths.marker,
          JSON.stringify({ previous_file_len: len + 500, new_file_len: len, retained_turn_base: 7 })
        )
        const manifest = yield* openAndCheck(root, "mk", "matching marker")
        assert.strictEqual(manifest.retained_turn_base, 7)
        assert.strictEqual(manifest.turn_count, 8)
        assert.isFalse(fs.existsSync(paths.marker))
        assertDiskConsistent(paths)
        const t = yield* Effect.scoped(Effect.flatMap(openLog(root, "mk"), (l) => l.reconstructTurn(7)))
        assert.deepStrictEqual(t.events, turn("one", "uno"))
      }).pipe(Effect.provide(nodeLayer())))

    it.effect("a stale marker is removed and changes nothing", () =>
      Effect.gen(function*() {
        const { root } = yield* testRoot
        const paths = pathsOf(root, "stale")
        yield* buildReference(root, "stale")
        const before = readDisk(paths)
        const len = before.bytes.length
        fs.writeFileSync(
          paths.marker,
          JSON.stringify({ previous_file_len: len + 500, new_file_len: len - 3, retained_turn_base: 7 })
        )
        const manifest = yield* openAndCheck(root, "stale", "stale marker")
        assert.strictEqual(manifest.retained_turn_base, 1)
        assert.strictEqual(manifest.turn_count, 2)
        assert.isFalse(fs.existsSync(paths.marker))
        assert.deepStrictEqual(readDisk(paths).entries, before.entries)
      }).pipe(Effect.provide(nodeLayer())))
  })

  describe("torn tails", () => {
    it.effect("a torn last line is terminated with exactly one newline so the next event survives reopen", () =>
      Effect.gen(function*() {
        const { root } = yield* testRoot
        const paths = pathsOf(root, "torn")
        yield* buildReference(root, "torn")
        const fragment = "{\"schema_version\":\"0.18.0\",\"event\":{\"type\":\"item.comp"
        fs.appendFileSync(paths.events, fragment)
        const torn = fs.readFileSync(paths.events)
        yield* Effect.scoped(Effect.gen(function*() {
          const log = yield* openLog(root, "torn")
          const repaired = fs.readFileSync(paths.events)
          assert.strictEqual(repaired.length, torn.length + 1)
          assert.strictEqual(repaired.subarray(0, torn.length).compare(torn), 0, "only a newline was added")
          assert.strictEqual(repaired.at(-1), 10)
          yield* appendAll(log, [ev.msg("after repair"), ev.completed()])
        }))
        const after = assertDiskConsistent(paths)
        assert.strictEqual(after.malformed, 1)
        const t = yield* Effect.scoped(Effect.flatMap(openLog(root, "torn"), (l) => l.reconstructTurn(3)))
        assert.deepStrictEqual(t.events, [ev.turnStarted(), ev.msg("three"), ev.msg("after repair"), ev.completed()])
        assert.strictEqual(t.skipped, 1)
      }).pipe(Effect.provide(nodeLayer())))

    it.effect("a complete last line missing only its newline is terminated and counted", () =>
      Effect.gen(function*() {
        const { root } = yield* testRoot
        const paths = pathsOf(root, "nl")
        fs.mkdirSync(paths.dir, { recursive: true })
        fs.writeFileSync(paths.events, lineOf(ev.turnStarted()) + encodeLine(ev.msg("no newline")))
        const manifest = yield* openAndCheck(root, "nl", "missing newline")
        assert.strictEqual(manifest.event_count, 2)
        assert.strictEqual(readDisk(paths).bytes.toString(), lineOf(ev.turnStarted()) + lineOf(ev.msg("no newline")))
      }).pipe(Effect.provide(nodeLayer())))
  })

  describe("truncation at every byte of the last two lines", () => {
    /**
     * For each cut: a copy of `source` truncated at `cut` is opened (checked against the oracle),
     * receives a new turn, is closed and reopened; the complete lines before the cut, the line cut
     * only before its newline, and the new turn must all be there, with at most one torn line.
     */
    const truncationLoop = (
      source: SessionPaths,
      base: string,
      id: string,
      cuts: ReadonlyArray<number>,
      checkNumbering: boolean
    ) =>
      Effect.gen(function*() {
        const full = fs.readFileSync(source.events)
        const lines = splitRaw(full)
        const original = expectedFromBytes(full, 1).lines.map((l) => l.event)
        for (const cut of cuts) {
          const label = `cut at ${cut}/${full.length}`
          const caseRoot = path.join(base, `cut-${cut}`)
          const paths = pathsOf(caseRoot, id)
          copyDir(source.dir, paths.dir)
          fs.truncateSync(paths.events, cut)
          const survivors: Array<ThreadEvent> = []
          let torn = 0
          lines.forEach((line, i) => {
            const end = line.offset + line.bytes.length
            if (end <= cut || end - 1 === cut) survivors.push(original[i] ?? fail())
            else if (line.offset < cut) torn++
          })
          yield* Effect.scoped(Effect.gen(function*() {
            const log = yield* openLog(caseRoot, id)
            assertDiskConsistent(paths, `${label}, after open`)
            yield* appendAll(log, turn(`after ${cut}`))
          }))
          const after: Expected = assertDiskConsistent(paths, `${label}, after append and close`)
          assert.deepStrictEqual(decodedEvents(after), [...survivors, ...turn(`after ${cut}`)], label)
          assert.strictEqual(after.malformed, torn, `${label}: torn lines`)
          yield* Effect.scoped(Effect.gen(function*() {
            const log = yield* openLog(caseRoot, id)
            const entries = yield* log.turnIndex
            const last = entries.at(-1)?.turn_number ?? 0
            assert.deepStrictEqual((yield* log.reconstructTurn(last)).events, turn(`after ${cut}`), label)
            if (checkNumbering) {
              assert.strictEqual(entries[0]?.turn_number, 1, `${label}: turn 1 keeps its number`)
              assert.deepStrictEqual((yield* log.reconstructTurn(1)).events, turn("one", "uno"), label)
            }
          }))
          fs.rmSync(caseRoot, { recursive: true, force: true })
        }
      })

    const fail = (): never => {
      throw new Error("missing fixture data")
    }

    it.effect("bytes written after the last barrier: every cut keeps turn numbering and all durable events", () =>
      Effect.gen(function*() {
        const { root, base } = yield* testRoot
        const paths = pathsOf(root, "tail")
        yield* buildReference(root, "tail")
        // Metadata of the durable part; then more bytes reach the file without metadata (a crash).
        const manifest = fs.readFileSync(paths.manifest)
        const index = fs.readFileSync(paths.turns)
        yield* Effect.scoped(Effect.gen(function*() {
          const log = yield* openLog(root, "tail")
          yield* appendAll(log, [ev.msg("a longer message in the open turn"), ev.completed()])
        }))
        fs.writeFileSync(paths.manifest, manifest)
        fs.writeFileSync(paths.turns, index)
        const len = fs.statSync(paths.events).size
        const lastTwo = splitRaw(fs.readFileSync(paths.events)).slice(-2)
        const from = lastTwo[0]?.offset ?? len
        const cuts = Array.from({ length: len - from + 1 }, (_, i) => from + i)
        yield* truncationLoop(paths, base, "tail", cuts, true)
      }).pipe(Effect.provide(nodeLayer())))

    it.effect("bytes already described by metadata: every cut leaves a consistent log that accepts appends", () =>
      Effect.gen(function*() {
        const { root, base } = yield* testRoot
        const paths = pathsOf(root, "described")
        yield* buildReference(root, "described")
        const len = fs.statSync(paths.events).size
        const from = splitRaw(fs.readFileSync(paths.events)).slice(-2)[0]?.offset ?? len
        const cuts = Array.from({ length: len - from + 1 }, (_, i) => from + i)
        // Turn numbers are not checked here: with persisted_file_len > file length, docs/log.md#turn-base rule 2
        // reads the shortfall as a prefix removed by a marker-less cap rewrite, so a cut deeper than
        // the first turn's start renumbers the retained turns (reported to the lead; domain rule).
        yield* truncationLoop(paths, base, "described", cuts, false)
      }).pipe(Effect.provide(nodeLayer())))
  })

  describe("line splitting", () => {
    it.effect("lines longer than a read chunk, with multi-byte characters across chunk edges, rescan and stream intact", () =>
      Effect.gen(function*() {
        const { root } = yield* testRoot
        const paths = pathsOf(root, "long")
        const huge = "🎉ü".repeat(120_000) // ~720 KB of 4- and 2-byte characters: several 256 KiB chunks
        const events = [ev.turnStarted(), ev.msg("short"), ev.msg(huge), ev.msg("after"), ev.completed(), ...turn("x")]
        yield* Effect.scoped(Effect.gen(function*() {
          yield* appendAll(yield* openLog(root, "long"), events)
        }))
        fs.rmSync(paths.manifest)
        const lines = yield* Effect.scoped(Effect.gen(function*() {
          const log = yield* openLog(root, "long")
          assert.deepStrictEqual((yield* log.reconstructTurn(1)).events, events.slice(0, 5))
          return yield* Stream.runCollect(log.visitSnapshot)
        }))
        const disk = assertDiskConsistent(paths)
        assert.deepStrictEqual(decodedEvents(disk), events)
        assert.deepStrictEqual(lines.map((l) => l.offset), disk.lines.map((l) => l.offset))
        assert.strictEqual(Buffer.concat(lines.map((l) => l.bytes)).compare(disk.disk.bytes), 0)
      }).pipe(Effect.provide(nodeLayer())))

    it.effect("a log written with CRLF line ends by another tool is read with raw-byte offsets", () =>
      Effect.gen(function*() {
        const { root } = yield* testRoot
        const paths = pathsOf(root, "crlf")
        fs.mkdirSync(paths.dir, { recursive: true })
        const events = [ev.threadStarted(), ...turn("a", "b"), ...turn("c")]
        fs.writeFileSync(paths.events, events.map((e) => encodeLine(e) + "\r\n").join(""))
        yield* Effect.scoped(Effect.gen(function*() {
          const log = yield* openLog(root, "crlf")
          assert.deepStrictEqual((yield* log.reconstructTurn(2)).events, turn("c"))
          yield* appendAll(log, turn("d"))
        }))
        const disk = assertDiskConsistent(paths)
        assert.strictEqual(disk.disk.manifest?.turn_count, 3)
        assert.deepStrictEqual(decodedEvents(disk), [...events, ...turn("d")])
      }).pipe(Effect.provide(nodeLayer())))
  })

  describe("zero-filled and garbage tails", () => {
    it.effect("a zero-filled extension of the file is one malformed line and later appends survive", () =>
      Effect.gen(function*() {
        const { root } = yield* testRoot
        const paths = pathsOf(root, "zeros")
        yield* buildReference(root, "zeros")
        fs.appendFileSync(paths.events, Buffer.alloc(4096))
        yield* Effect.scoped(Effect.gen(function*() {
          const log = yield* openLog(root, "zeros")
          assertDiskConsistent(paths, "after open")
          yield* appendAll(log, [ev.completed(), ...turn("after zeros")])
        }))
        const after = assertDiskConsistent(paths, "after reopen")
        assert.strictEqual(after.malformed, 1)
        assert.deepStrictEqual(decodedEvents(after), [...referenceEvents, ev.completed(), ...turn("after zeros")])
        const t = yield* Effect.scoped(Effect.flatMap(openLog(root, "zeros"), (l) => l.reconstructTurn(4)))
        assert.deepStrictEqual(t.events, turn("after zeros"))
      }).pipe(Effect.provide(nodeLayer())))

    it.effect("a last line overwritten with zeros in place is noticed although the length still matches", () =>
      Effect.gen(function*() {
        const { root } = yield* testRoot
        const paths = pathsOf(root, "zeroed")
        yield* buildReference(root, "zeroed")
        const bytes = fs.readFileSync(paths.events)
        const last = splitRaw(bytes).at(-1)?.offset ?? 0
        bytes.fill(0, last)
        fs.writeFileSync(paths.events, bytes)
        const manifest = yield* openAndCheck(root, "zeroed", "zeroed last line")
        assert.strictEqual(manifest.event_count, referenceEvents.length - 1)
        const after = assertDiskConsistent(paths)
        assert.strictEqual(after.malformed, 1)
      }).pipe(Effect.provide(nodeLayer())))

    it.effect("seeded garbage tails never break consistency or later appends", () =>
      Effect.gen(function*() {
        const { root } = yield* testRoot
        const rng = prng(20261003)
        for (let round = 0; round < 30; round++) {
          const id = `garbage-${round}`
          const paths = pathsOf(root, id)
          yield* buildReference(root, id)
          const garbage = Buffer.from(Array.from({ length: rng.int(1, 300) }, () => {
            const r = rng.next()
            return r < 0.1 ? 10 : r < 0.2 ? 0xff : r < 0.3 ? 0x7b : rng.int(0, 255)
          }))
          fs.appendFileSync(paths.events, garbage)
          yield* Effect.scoped(Effect.gen(function*() {
            const log = yield* openLog(root, id)
            assertDiskConsistent(paths, `round ${round}, after open`)
            yield* appendAll(log, turn(`after ${round}`))
          }))
          const after = assertDiskConsistent(paths, `round ${round}`)
          const events = decodedEvents(after)
          assert.deepStrictEqual(events.slice(0, referenceEvents.length), [...referenceEvents], `round ${round}`)
          assert.deepStrictEqual(events.slice(-3), [...turn(`after ${round}`)], `round ${round}`)
        }
      }).pipe(Effect.provide(nodeLayer())))
  })
})
