import { assert, describe, it } from "@effect/vitest"
import { Schema } from "effect"
import { Manifest, TurnEntry } from "../../src/log/SessionFiles.ts"
import { isIndexConsistent, isIndexValid, locateTurn } from "../../src/log/TurnIndex.ts"
import {
  entriesOf,
  entryAt,
  isTableConsistent,
  isTableValid,
  locateTurnIn,
  turnTableOf
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
