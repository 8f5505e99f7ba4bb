import { assert, describe, it } from "@effect/vitest"
import type { TurnEntry } from "@logbook/domain"
import { encodeLine, encodeTurnIndex, entriesOf } from "@logbook/domain"
import { Effect, Schema } from "effect"
import * as fs from "node:fs"
import { crc32 } from "node:zlib"
import { SessionFs } from "../../src/fs/SessionFs.ts"
import type { SidecarBinding } from "../../src/log/TurnIndexSidecar.ts"
import {
  decodeTurnIndexSidecar,
  encodeTurnIndexSidecar,
  loadTurnIndexSidecar,
  SIDECAR_MIN_ENTRIES
} from "../../src/log/TurnIndexSidecar.ts"
import { ev, nodeLayer, openLog, pathsOf, testRoot } from "../fixtures/eventlogHelpers.ts"

const Ts = Schema.String.check(Schema.isMaxLength(12))
const Span = Schema.Struct({ gap: Schema.Natural, size: Schema.Natural, events: Schema.Natural, ts: Ts })

/** Consecutive entries from spans, the shape every index the store writes has. */
const entriesFrom = (first: number, spans: ReadonlyArray<typeof Span.Type>): Array<TurnEntry> => {
  let offset = 0
  return spans.map((s, i) => {
    const start = offset + s.gap
    offset = start + s.size
    return { turn_number: first + i, start_offset: start, end_offset: offset, event_count: s.events, ts: s.ts }
  })
}

const bindingOf = (entries: ReadonlyArray<TurnEntry>, fileLen: number): SidecarBinding => {
  const json = Buffer.from(encodeTurnIndex(entries), "utf8")
  return { jsonBytes: json.length, jsonCrc: crc32(json), fileLen }
}

const sample = entriesFrom(3, [
  { gap: 0, size: 10, events: 2, ts: "2025-01-01T00:00:00.000Z" },
  { gap: 5, size: 20, events: 1, ts: "2026-12-01T21:46:41.020+00:00" }
])

/** Writes a log of `turns` closed turns and opens it once, which publishes its metadata. */
const bigSession = (root: string, id: string, turns: number) =>
  Effect.gen(function*() {
    const paths = pathsOf(root, id)
    fs.mkdirSync(paths.dir, { recursive: true, mode: 0o700 })
    const lines: Array<string> = []
    for (let t = 1; t <= turns; t++) {
      lines.push(encodeLine(ev.turnStarted()), encodeLine(ev.msg(`t${t}`)), encodeLine(ev.completed()))
    }
    fs.writeFileSync(paths.events, lines.join("\n") + "\n", { mode: 0o600 })
    const entries = yield* Effect.scoped(Effect.flatMap(openLog(root, id, uncapped), (log) => log.turnIndex))
    return { paths, entries, fileLen: fs.statSync(paths.events).size }
  })

const uncapped = { maxEvents: 0, maxBytes: 0 } as const

const load = (paths: ReturnType<typeof pathsOf>, fileLen: number) =>
  SessionFs.use((fsApi) => loadTurnIndexSidecar(fsApi, paths.turnsSidecar, paths.turns, fileLen))

describe("TurnIndexSidecar", () => {
  it.prop(
    "the sidecar's table is the object index it was encoded from, entry by entry",
    { first: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 1000 })), spans: Schema.Array(Span) },
    ({ first, spans }) => {
      const entries = entriesFrom(first, spans)
      const binding = bindingOf(entries, 1e12)
      const bytes = encodeTurnIndexSidecar(entries, binding)
      if (bytes === undefined) {
        // Refused only for what it cannot hold: a `ts` with a lone surrogate (not UTF-8) or a count past 2^53.
        assert.isTrue(
          entries.some((e) => /\p{Cs}/u.test(e.ts) || !Number.isSafeInteger(e.end_offset)),
          "a representable index was refused"
        )
        return
      }
      const table = decodeTurnIndexSidecar(bytes, binding)
      assert.isDefined(table)
      if (table === undefined) return
      assert.deepStrictEqual(entriesOf(table), entries)
    }
  )

  it("is refused when bound to other turns.json bytes or another log length", () => {
    const binding = bindingOf(sample, 100)
    const bytes = encodeTurnIndexSidecar(sample, binding)
    assert.isDefined(bytes)
    if (bytes === undefined) return
    assert.isUndefined(decodeTurnIndexSidecar(bytes, { ...binding, jsonCrc: (binding.jsonCrc + 1) >>> 0 }))
    assert.isUndefined(decodeTurnIndexSidecar(bytes, { ...binding, jsonBytes: binding.jsonBytes + 1 }))
    assert.isUndefined(decodeTurnIndexSidecar(bytes, { ...binding, fileLen: 101 }))
    assert.isDefined(decodeTurnIndexSidecar(bytes, binding))
  })

  it("is refused when any byte of it is changed or it is cut short", () => {
    const binding = bindingOf(sample, 100)
    const bytes = encodeTurnIndexSidecar(sample, binding)
    assert.isDefined(bytes)
    if (bytes === undefined) return
    for (let i = 0; i < bytes.length; i++) {
      const corrupt = Uint8Array.from(bytes)
      corrupt[i] = (corrupt[i] ?? 0) ^ 0x5a
      const table = decodeTurnIndexSidecar(corrupt, binding)
      assert.isUndefined(table, `byte ${i} changed`)
    }
    assert.isUndefined(decodeTurnIndexSidecar(bytes.subarray(0, bytes.length - 1), binding))
    assert.isUndefined(decodeTurnIndexSidecar(bytes.subarray(0, 10), binding))
  })

  it("is not written for an index it cannot represent", () => {
    const gap = [sample[0], { ...sample[1], turn_number: 9 }].filter((e): e is TurnEntry => e !== undefined)
    assert.isUndefined(encodeTurnIndexSidecar(gap, bindingOf(gap, 100)))
    const long = sample.map((e) => ({ ...e, ts: "x".repeat(40) }))
    assert.isUndefined(encodeTurnIndexSidecar(long, bindingOf(long, 100)))
  })

  it.effect("a large session gets a sidecar that loads as its turn index; a changed turns.json makes it stale", () =>
    Effect.gen(function*() {
      const { root } = yield* testRoot
      const { entries, fileLen, paths } = yield* bigSession(root, "big", SIDECAR_MIN_ENTRIES + 10)
      assert.isTrue(fs.existsSync(paths.turnsSidecar))
      const table = yield* load(paths, fileLen)
      assert.isDefined(table)
      if (table !== undefined) assert.deepStrictEqual(entriesOf(table), entries)
      assert.isUndefined(yield* load(paths, fileLen + 1), "another log length")
      // Same entries, other bytes (a writer that does not know the sidecar rewrote turns.json).
      const json = fs.readFileSync(paths.turns, "utf8")
      fs.writeFileSync(paths.turns, json.replace("\"ts\":\"", "\"ts\":\"x"))
      assert.isUndefined(yield* load(paths, fileLen), "turns.json changed")
      fs.writeFileSync(paths.turns, json)
      assert.isDefined(yield* load(paths, fileLen), "the same bytes again")
    }).pipe(Effect.provide(nodeLayer())))

  it.effect("a corrupt or missing sidecar is ignored by the open and rebuilt by the next barrier", () =>
    Effect.gen(function*() {
      const { root } = yield* testRoot
      const { entries, fileLen, paths } = yield* bigSession(root, "big", SIDECAR_MIN_ENTRIES + 3)
      const good = fs.readFileSync(paths.turnsSidecar)
      const corrupt = Buffer.from(good)
      corrupt[good.length - 70] = (corrupt[good.length - 70] ?? 0) ^ 0xff
      fs.writeFileSync(paths.turnsSidecar, corrupt)
      assert.isUndefined(yield* load(paths, fileLen))
      yield* Effect.scoped(Effect.gen(function*() {
        const log = yield* openLog(root, "big", uncapped)
        assert.deepStrictEqual(yield* log.turnIndex, entries, "the index comes from turns.json")
        yield* log.append(ev.turnStarted())
        yield* log.append(ev.completed())
      }))
      const rebuilt = yield* load(paths, fs.statSync(paths.events).size)
      assert.isDefined(rebuilt)
      assert.strictEqual(rebuilt?.length, entries.length + 1)
      fs.rmSync(paths.turnsSidecar)
      yield* Effect.scoped(Effect.gen(function*() {
        const log = yield* openLog(root, "big", uncapped)
        assert.strictEqual((yield* log.turnIndex).length, entries.length + 1)
        yield* log.append(ev.turnStarted())
        yield* log.append(ev.completed())
      }))
      assert.isTrue(fs.existsSync(paths.turnsSidecar), "written again by the barrier")
      assert.strictEqual((yield* load(paths, fs.statSync(paths.events).size))?.length, entries.length + 2)
    }).pipe(Effect.provide(nodeLayer())))
})
