/**
 * The ranking rules (docs/search.md#ranking): the idf and term weight formulas with their
 * constants, the recency multiplier's range and half-life, byte-wise tie order.
 */
import { assert, describe, it } from "@effect/vitest"
import { Schema } from "effect"
import {
  BM25_B,
  BM25_K1,
  bm25Idf,
  bm25Score,
  bm25Term,
  bm25TermBound,
  compareBytewise,
  compareRanked,
  keepsScore,
  RECENCY_HALF_LIFE_DAYS,
  RECENCY_WEIGHT,
  recencyMultiplier
} from "../../src/memory/Bm25.ts"

const DAY = 86_400

describe("Bm25", () => {
  it("uses k1 = 1.2, b = 0.75 and the idf ln((N − df + 0.5)/(df + 0.5) + 1)", () => {
    assert.strictEqual(BM25_K1, 1.2)
    assert.strictEqual(BM25_B, 0.75)
    assert.closeTo(bm25Idf(10, 1), Math.log(9.5 / 1.5 + 1), 1e-12)
    // A term in every document still has a positive idf.
    assert.isAbove(bm25Idf(3, 3), 0)
    // tf 2 in a document of average length: idf · 2 · 2.2 / (2 + 1.2)
    assert.closeTo(bm25Term(1, 2, 10, 10), (2 * 2.2) / 3.2, 1e-12)
    // avgdl below 1 is treated as 1
    assert.closeTo(bm25Term(1, 1, 1, 0.5), bm25Term(1, 1, 1, 1), 1e-12)
    assert.strictEqual(bm25Term(1, 0, 5, 5), 0)
  })

  it.prop("never exceeds its bound", [
    Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 50 })),
    Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 200 }))
  ], ([tf, dl]) => {
    const idf = bm25Idf(100, 3)
    assert.isAtMost(bm25Term(idf, tf, dl, 11), bm25TermBound(idf))
  })

  it("keeps the recency multiplier in [1.0, 1.1] and halves the bonus every 30 days", () => {
    const now = 1_800_000_000
    assert.strictEqual(RECENCY_WEIGHT, 0.1)
    assert.strictEqual(RECENCY_HALF_LIFE_DAYS, 30)
    assert.strictEqual(recencyMultiplier(null, now), 1)
    assert.closeTo(recencyMultiplier(now, now), 1.1, 1e-12)
    assert.closeTo(recencyMultiplier(now + 10 * DAY, now), 1.1, 1e-12)
    assert.closeTo(recencyMultiplier(now - 30 * DAY, now), 1.05, 1e-12)
    assert.closeTo(recencyMultiplier(now - 60 * DAY, now), 1.025, 1e-12)
    const ancient = recencyMultiplier(0, now)
    assert.isAtLeast(ancient, 1)
    assert.isBelow(ancient, 1.0001)
  })

  it("orders by score, then chunk id byte-wise", () => {
    const sorted = [
      { score: 1, chunkId: "b:0" },
      { score: 2, chunkId: "z:0" },
      { score: 1, chunkId: "a:10" },
      { score: 1, chunkId: "a:2" }
    ].sort(compareRanked)
    assert.deepStrictEqual(sorted.map((r) => r.chunkId), ["z:0", "a:10", "a:2", "b:0"])
    // U+FF5E sorts before U+1F600 in UTF-8 although its UTF-16 code unit is larger.
    assert.isBelow(compareBytewise("\uff5e", "\u{1f600}"), 0)
    assert.isAbove(compareBytewise("b", "a"), 0)
    assert.isBelow(compareBytewise("a", "ab"), 0)
  })

  it("keeps only positive scores at least minScore", () => {
    assert.isFalse(keepsScore(0, 0))
    assert.isTrue(keepsScore(0.5, 0.5))
    assert.isFalse(keepsScore(0.4, 0.5))
  })
  it("scores a document by summing each query token's term in query order, times the recency multiplier", () => {
    const now = 1_800_000_000
    const idf: Record<string, number> = { a: 0.7, b: 1.9 }
    const tf: Record<string, number> = { a: 2, b: 1 }
    const idfOf = (t: string) => idf[t] ?? 0
    const tfOf = (t: string) => tf[t] ?? 0
    const score = bm25Score(["b", "a", "zz", "b"], idfOf, tfOf, 7, 5, now - 30 * 86_400, now)
    let lexical = 0
    for (const t of ["b", "a", "zz", "b"]) lexical += bm25Term(idfOf(t), tfOf(t), 7, 5)
    assert.strictEqual(score, lexical * recencyMultiplier(now - 30 * 86_400, now))
    assert.closeTo(score / lexical, 1.05, 1e-12)
    assert.strictEqual(bm25Score(["zz"], idfOf, tfOf, 7, 5, null, now), 0)
  })
})
