import { assert, describe, it } from "@effect/vitest"
import { Schema } from "effect"
import { initialManifest, Manifest, PendingCapRewrite, TurnEntry } from "../../src/log/SessionFiles.ts"
import { inferTurnBase, isIndexConsistent, isIndexValid } from "../../src/log/TurnIndex.ts"

const entry = (turn_number: number, start_offset: number, end_offset: number, event_count = 1): TurnEntry => ({
  turn_number,
  start_offset,
  end_offset,
  event_count,
  ts: "t"
})

const manifest = (patch: Partial<Manifest>): Manifest => ({ ...initialManifest("s", "t"), ...patch })

const withoutBase = (m: Manifest): Manifest => {
  const { retained_turn_base: _base, ...rest } = m
  return rest
}

describe("TurnIndex", () => {
  describe("isIndexValid", () => {
    it("accepts an empty index for any length", () => {
      assert.isTrue(isIndexValid([], 0))
      assert.isTrue(isIndexValid([], 100))
    })

    it("accepts adjacent, gapped and file-ending entries", () => {
      assert.isTrue(isIndexValid([entry(1, 0, 10), entry(2, 10, 20), entry(3, 35, 50)], 50))
    })

    it("rejects an entry with no events", () => {
      assert.isFalse(isIndexValid([entry(1, 0, 10, 0)], 10))
    })

    it("rejects an entry that starts before the previous one ends", () => {
      assert.isFalse(isIndexValid([entry(1, 0, 10), entry(2, 9, 20)], 20))
    })

    it("rejects an entry that ends before it starts", () => {
      assert.isFalse(isIndexValid([entry(1, 10, 5)], 20))
    })

    it("rejects an entry that ends past the file", () => {
      assert.isFalse(isIndexValid([entry(1, 0, 10), entry(2, 10, 21)], 20))
      assert.isTrue(isIndexValid([entry(1, 0, 10), entry(2, 10, 21)], 21))
    })
  })

  describe("isIndexConsistent", () => {
    it("accepts contiguous turns from the retained base to turn_count", () => {
      const entries = [entry(3, 0, 10), entry(4, 10, 20), entry(5, 20, 30)]
      assert.isTrue(isIndexConsistent(entries, manifest({ turn_count: 5, retained_turn_base: 3 })))
    })

    it("expects the open turn as the last entry while in a turn", () => {
      const entries = [entry(1, 0, 10), entry(2, 10, 20)]
      assert.isTrue(isIndexConsistent(entries, manifest({ turn_count: 1, in_turn: true })))
      assert.isFalse(isIndexConsistent(entries, manifest({ turn_count: 1, in_turn: false })))
      assert.isTrue(isIndexConsistent(entries, manifest({ turn_count: 2, in_turn: false })))
    })

    it("rejects a gap or a repeated turn number", () => {
      assert.isFalse(isIndexConsistent([entry(1, 0, 10), entry(3, 10, 20)], manifest({ turn_count: 3 })))
      assert.isFalse(
        isIndexConsistent([entry(1, 0, 10), entry(1, 10, 20), entry(2, 20, 30)], manifest({ turn_count: 2 }))
      )
    })

    it("rejects a first turn other than the retained base", () => {
      assert.isFalse(isIndexConsistent([entry(2, 0, 10)], manifest({ turn_count: 2, retained_turn_base: 1 })))
      assert.isFalse(isIndexConsistent([entry(1, 0, 10)], manifest({ turn_count: 1, retained_turn_base: 2 })))
    })

    it("treats an absent or zero retained base as 1", () => {
      assert.isTrue(isIndexConsistent([entry(1, 0, 10)], withoutBase(manifest({ turn_count: 1 }))))
      assert.isTrue(isIndexConsistent([entry(1, 0, 10)], manifest({ turn_count: 1, retained_turn_base: 0 })))
    })

    it("accepts an empty index for a session without turns or with every turn evicted", () => {
      assert.isTrue(isIndexConsistent([], manifest({ turn_count: 0 })))
      assert.isTrue(isIndexConsistent([], withoutBase(manifest({ turn_count: 0 }))))
      assert.isTrue(isIndexConsistent([], manifest({ turn_count: 4, retained_turn_base: 5 })))
      assert.isFalse(isIndexConsistent([], manifest({ turn_count: 4, retained_turn_base: 4 })))
      assert.isFalse(isIndexConsistent([], withoutBase(manifest({ turn_count: 1 }))))
    })

    it("rejects an empty index while a turn is open, unlike the reference", () => {
      assert.isFalse(isIndexConsistent([], manifest({ turn_count: 0, in_turn: true })))
      assert.isFalse(isIndexConsistent([], manifest({ turn_count: 4, retained_turn_base: 5, in_turn: true })))
    })
  })

  describe("inferTurnBase", () => {
    const marker: PendingCapRewrite = { previous_file_len: 100, new_file_len: 40, retained_turn_base: 7 }
    // A 100-byte log of three turns, as the old metadata describes it.
    const entries = [entry(1, 0, 30, 3), entry(2, 30, 60, 3), entry(3, 60, 100, 4)]
    const old = manifest({ turn_count: 3, persisted_file_len: 100, retained_turn_base: 1 })

    it("rule 1: a matching marker wins over everything else", () => {
      assert.strictEqual(inferTurnBase(old, entries, marker, 40), 7)
      assert.strictEqual(inferTurnBase(undefined, undefined, marker, 40), 7)
    })

    it("rule 2: a shorter file than persisted means a prefix was cut; the first turn past the cut is the base", () => {
      assert.strictEqual(inferTurnBase(old, entries, undefined, 40), 3)
      assert.strictEqual(inferTurnBase(old, entries, undefined, 70), 2)
    })

    it("rule 2: a file cut to nothing continues after the last closed turn", () => {
      assert.strictEqual(inferTurnBase(old, entries, undefined, 0), 4)
    })

    it("rule 2: with no turn past the cut and bytes left, falls through to rule 3 like the reference", () => {
      // The last 5 bytes would be out-of-turn records; the reference then uses retained_turn_base.
      const tail = [entry(1, 0, 30, 3), entry(2, 30, 95, 3)]
      assert.strictEqual(inferTurnBase(manifest({ ...old, retained_turn_base: 2 }), tail, undefined, 5), 2)
    })

    it("rule 2 is skipped when the index does not fit the persisted length", () => {
      const broken = [entry(1, 0, 30), entry(2, 20, 60)]
      assert.strictEqual(inferTurnBase({ ...old, retained_turn_base: 5 }, broken, undefined, 40), 5)
    })

    it("rule 2 with a re-inserted checkpoint prefix finds the exact base given the leading matrix run", () => {
      // Turns 1 and 2 were evicted (cut at 60) and 35 checkpoint bytes were prepended: L = 35 + 40 = 75.
      assert.strictEqual(inferTurnBase(old, entries, undefined, 75), 2, "the reference rule is off by one here")
      assert.strictEqual(inferTurnBase(old, entries, undefined, 75, 35), 3)
    })

    it("rule 2 with checkpoints tolerates out-of-turn matrix lines right after the cut", () => {
      // Old log: turn 1 [0,30), turn 2 [30,60), a matrix.updated line [60,70), turn 3 [70,100).
      const gapped = [entry(1, 0, 30), entry(2, 30, 60), entry(3, 70, 100)]
      // Cut at 60, 35 checkpoint bytes: the file starts with 35 + 10 bytes of matrix.updated lines.
      assert.strictEqual(inferTurnBase(old, gapped, undefined, 75, 45), 3)
    })

    it("rule 2 with only checkpoints left continues after the last closed turn", () => {
      // Every turn evicted (cut at 100), 30 checkpoint bytes remain.
      assert.strictEqual(inferTurnBase(old, entries, undefined, 30), 1, "the reference falls back to the old base")
      assert.strictEqual(inferTurnBase(old, entries, undefined, 30, 30), 4)
    })

    it("rule 3: otherwise the manifest's retained base", () => {
      assert.strictEqual(
        inferTurnBase({ ...old, retained_turn_base: 3, persisted_file_len: 100 }, entries, undefined, 100),
        3
      )
      assert.strictEqual(
        inferTurnBase({ ...old, retained_turn_base: 3, persisted_file_len: 50 }, entries, undefined, 120),
        3
      )
      assert.strictEqual(inferTurnBase(manifest({ retained_turn_base: 3 }), undefined, undefined, 10), 3)
    })

    it("rule 4: a legacy manifest without a base takes the first turn of an index valid for the file", () => {
      const legacy = [entry(4, 0, 30), entry(5, 30, 60)]
      assert.strictEqual(inferTurnBase(withoutBase(manifest({ turn_count: 5 })), legacy, undefined, 60), 4)
      assert.strictEqual(inferTurnBase(undefined, legacy, undefined, 60), 4)
    })

    it("rule 4 is skipped when the index does not fit the file", () => {
      assert.strictEqual(inferTurnBase(undefined, [entry(4, 0, 30), entry(5, 30, 60)], undefined, 59), 1)
    })

    it("rule 5: with nothing to go on, numbering starts at 1", () => {
      assert.strictEqual(inferTurnBase(undefined, undefined, undefined, 0), 1)
      assert.strictEqual(inferTurnBase(undefined, [], undefined, 500), 1)
      assert.strictEqual(inferTurnBase(withoutBase(manifest({ turn_count: 9 })), undefined, undefined, 500), 1)
    })

    it("never returns less than 1", () => {
      assert.strictEqual(inferTurnBase(undefined, undefined, { ...marker, retained_turn_base: 0 }, 40), 1)
      assert.strictEqual(inferTurnBase(manifest({ retained_turn_base: 0 }), undefined, undefined, 0), 1)
      assert.strictEqual(inferTurnBase(undefined, [entry(0, 0, 5)], undefined, 5), 1)
    })

    it.prop(
      "is at least 1 for any inputs",
      {
        m: Schema.UndefinedOr(Manifest),
        entries: Schema.UndefinedOr(Schema.Array(TurnEntry)),
        marker: Schema.UndefinedOr(PendingCapRewrite),
        fileLen: Schema.Natural,
        run: Schema.Natural
      },
      ({ entries, fileLen, m, marker, run }) => {
        assert.isAtLeast(inferTurnBase(m, entries, marker, fileLen, run), 1)
      }
    )
  })
})
