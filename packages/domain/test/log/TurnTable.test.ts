import { assert, describe, it } from "@effect/vitest"
import { Schema, SchemaGetter } from "effect"
import { Manifest, TurnEntry } from "../../src/log/SessionFiles.ts"
import { isIndexConsistent, isIndexValid, locateTurn } from "../../src/log/TurnIndex.ts"
import {
  entriesOf,
  entryAt,
  isTableConsistent,
  isTableValid,
  locateTurnIn,
  TurnColumns,
  turnTableOf,
  withOpenEntry
} from "../../src/log/TurnTable.ts"

const entry = (turn_number: number, start_offset: number, end_offset: number): TurnEntry => ({
  turn_number,
  start_offset,
  end_offset,
  event_count: 1,
  ts: `t${turn_number}`
})

describe("TurnTable", () => {
  it("reads every field of an entry column by column and refuses an index out of range", () => {
    const table = turnTableOf([entry(4, 0, 10), entry(5, 10, 30)])
    assert.strictEqual(table.length, 2)
    assert.deepStrictEqual(entryAt(table, 1), entry(5, 10, 30))
    assert.throws(() => table.startAt(2), RangeError)
  })

  it.prop(
    "a table over entries is the object index: same entries, same validity, consistency and lookup",
    {
      entries: Schema.Array(TurnEntry),
      manifest: Manifest,
      fileLen: Schema.Natural,
      base: Schema.Natural,
      turn: Schema.Int
    },
    ({ base, entries, fileLen, manifest, turn }) => {
      const table = turnTableOf(entries)
      assert.deepStrictEqual(entriesOf(table), [...entries])
      assert.strictEqual(isTableValid(table, fileLen), isIndexValid(entries, fileLen))
      assert.strictEqual(isTableConsistent(table, manifest), isIndexConsistent(entries, manifest))
      // Among duplicated turn numbers both find the first one.
      assert.deepStrictEqual(locateTurnIn(table, base, turn), locateTurn(entries, base, turn))
      const present = entries[0]?.turn_number
      if (present !== undefined) {
        assert.deepStrictEqual(locateTurnIn(table, base, present), locateTurn(entries, base, present))
      }
    }
  )

  it.prop(
    "a consecutive index is valid and consistent as a table exactly when it is as objects",
    { first: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 50 })), sizes: Schema.Array(Schema.Natural) },
    ({ first, sizes }) => {
      let offset = 0
      const entries = sizes.map((size, i) => {
        const e = entry(first + i, offset, offset + size)
        offset += size
        return e
      })
      const manifest = {
        ...Schema.decodeUnknownSync(Manifest)({
          session_id: "s",
          schema_version: 1,
          created_at: "t",
          updated_at: "t",
          turn_count: first + entries.length - 1,
          event_count: entries.length,
          status: "active"
        }),
        in_turn: false,
        retained_turn_base: first
      }
      const table = turnTableOf(entries)
      assert.strictEqual(isTableValid(table, offset), isIndexValid(entries, offset))
      assert.strictEqual(isTableConsistent(table, manifest), isIndexConsistent(entries, manifest))
    }
  )
})

/** Timestamps of every shape a turn index holds: both store forms, a reference form, near misses, any text. */
const Timestamp = Schema.Union([
  Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 253402300799999 })).pipe(
    Schema.decodeTo(Schema.String, {
      decode: SchemaGetter.transform((ms: number) => new Date(ms).toISOString()),
      encode: SchemaGetter.transform((s: string) => Date.parse(s))
    })
  ),
  Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 253402300799999 })).pipe(
    Schema.decodeTo(Schema.String, {
      decode: SchemaGetter.transform((ms: number) => `${new Date(ms).toISOString().slice(0, 23)}+00:00`),
      encode: SchemaGetter.transform((s: string) => Date.parse(s))
    })
  ),
  Schema.Literals([
    "2026-02-30T00:00:00.000Z",
    "2026-01-01T00:00:00.000+01:00",
    "2026-01-01T00:00:00.123456789Z",
    "2026-01-01T00:00:00Z",
    "2026-13-01T00:00:00.000+00:00",
    "+275760-09-13T00:00:00.000Z",
    ""
  ]),
  Schema.String
])

const Entry = Schema.Struct({
  turn_number: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 1e12 })),
  start_offset: Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 2 ** 52 })),
  end_offset: Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 2 ** 52 })),
  event_count: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 2 ** 40 })),
  ts: Timestamp
})

describe("TurnColumns", () => {
  it.prop(
    "whatever is pushed reads back field for field, timestamps byte for byte",
    { entries: Schema.Array(Entry) },
    ({ entries }) => {
      const columns = new TurnColumns()
      for (const e of entries) columns.push(e)
      assert.strictEqual(columns.length, entries.length)
      assert.deepStrictEqual(entriesOf(columns), entries)
      assert.deepStrictEqual(entriesOf(TurnColumns.of(turnTableOf(entries))), entries)
    }
  )

  it.prop(
    "a slice drops the front and moves offsets and numbers exactly",
    { entries: Schema.Array(Entry), from: Schema.Int, offset: Schema.Int, turn: Schema.Int },
    ({ entries, from, offset, turn }) => {
      const cut = Math.abs(from) % (entries.length + 1)
      const offsetShift = offset % 1_000_000
      const turnShift = turn % 1_000
      const columns = TurnColumns.of(turnTableOf(entries))
      const sliced = columns.slice(cut, offsetShift, turnShift)
      assert.deepStrictEqual(
        entriesOf(sliced),
        entries.slice(cut).map((e) => ({
          ...e,
          turn_number: e.turn_number + turnShift,
          start_offset: e.start_offset + offsetShift,
          end_offset: e.end_offset + offsetShift
        }))
      )
      assert.strictEqual(columns.length, entries.length, "the original is untouched")
    }
  )

  it("crosses block boundaries and refuses an index out of range", () => {
    const columns = new TurnColumns()
    const n = 4096 * 2 + 7
    for (let i = 0; i < n; i++) columns.push(entry(i + 1, i * 10, i * 10 + 10))
    assert.strictEqual(columns.length, n)
    assert.deepStrictEqual(entryAt(columns, 4096), entry(4097, 40960, 40970))
    assert.deepStrictEqual(entryAt(columns, n - 1), entry(n, (n - 1) * 10, n * 10))
    assert.throws(() => columns.turnAt(n), RangeError)
    assert.throws(() => columns.turnAt(-1), RangeError)
  })

  it("shows an open entry after the closed ones without copying them", () => {
    const columns = new TurnColumns()
    columns.push(entry(1, 0, 10))
    const open = entry(2, 10, 15)
    const view = withOpenEntry(columns, open)
    assert.deepStrictEqual(entriesOf(view), [entry(1, 0, 10), open])
    columns.push(entry(2, 10, 20))
    assert.strictEqual(view.length, 3, "the view reads the columns as they are now")
    assert.strictEqual(withOpenEntry(columns, undefined), columns)
  })
})
