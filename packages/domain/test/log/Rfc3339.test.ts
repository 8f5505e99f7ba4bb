/**
 * RFC 3339: the formatter writes the two offset spellings, clamps what a broken clock gives, and
 * round-trips through the nanosecond parser; the parser keeps nine digits and rejects non-dates.
 */
import { assert, describe, it } from "@effect/vitest"
import { Schema } from "effect"
import { compareInstants, formatRfc3339, parseRfc3339 } from "../../src/log/Rfc3339.ts"

describe("Rfc3339: formatRfc3339", () => {
  it("writes UTC with millisecond precision and a +00:00 offset, or Z when asked", () => {
    const ms = Date.UTC(2026, 9, 3, 9, 12, 44, 123)
    assert.strictEqual(formatRfc3339(ms), "2026-10-03T09:12:44.123+00:00")
    assert.strictEqual(formatRfc3339(ms, "Z"), "2026-10-03T09:12:44.123Z")
    assert.strictEqual(formatRfc3339(ms + 0.9), "2026-10-03T09:12:44.123+00:00")
  })

  it("clamps a clock outside the years 1970-9999 instead of throwing", () => {
    assert.strictEqual(formatRfc3339(-1), "1970-01-01T00:00:00.000+00:00")
    assert.strictEqual(formatRfc3339(Number.NaN, "Z"), "1970-01-01T00:00:00.000Z")
    assert.strictEqual(formatRfc3339(Number.MAX_SAFE_INTEGER), "9999-12-31T23:59:59.999+00:00")
  })

  it.prop("parses back to the same instant in both spellings", [Schema.Int], ([n]) => {
    const ms = Math.abs(n) % 4_000_000_000_000
    const expected = { seconds: Math.floor(ms / 1000), nanos: (ms % 1000) * 1_000_000 }
    assert.deepStrictEqual(parseRfc3339(formatRfc3339(ms)), expected)
    assert.deepStrictEqual(parseRfc3339(formatRfc3339(ms, "Z")), expected)
  })

  it.prop("orders like the milliseconds it formats", [Schema.Int, Schema.Int], ([a, b]) => {
    const [x, y] = [Math.abs(a) % 4_000_000_000_000, Math.abs(b) % 4_000_000_000_000]
    const [px, py] = [parseRfc3339(formatRfc3339(x)), parseRfc3339(formatRfc3339(y))]
    assert.isDefined(px)
    assert.isDefined(py)
    if (px !== undefined && py !== undefined) assert.strictEqual(Math.sign(compareInstants(px, py)), Math.sign(x - y))
  })
})

describe("Rfc3339: parseRfc3339", () => {
  it("keeps all nine fractional digits and applies the offset", () => {
    assert.deepStrictEqual(parseRfc3339("2026-10-03T09:12:44.123456789+00:00"), {
      seconds: Date.UTC(2026, 9, 3, 9, 12, 44) / 1000,
      nanos: 123_456_789
    })
    assert.deepStrictEqual(parseRfc3339("2026-10-03T11:12:44.5+02:00"), {
      seconds: Date.UTC(2026, 9, 3, 9, 12, 44) / 1000,
      nanos: 500_000_000
    })
    assert.deepStrictEqual(parseRfc3339("2026-10-03T09:12:44Z"), parseRfc3339("2026-10-03T04:12:44-05:00"))
  })

  it("rejects text that is not a real RFC 3339 instant", () => {
    for (
      const bad of [
        "",
        "yesterday",
        "2026-02-30T00:00:00Z",
        "2026-13-01T00:00:00Z",
        "2026-10-03T24:00:00Z",
        "2026-10-03T09:12:44",
        "2026-10-03 09:12:44+0000"
      ]
    ) {
      assert.isUndefined(parseRfc3339(bad), bad)
    }
  })

  it("does not map two-digit years onto the twentieth century", () => {
    // 0001-01-01 is -62 135 596 800; years 1–49 hold 49 × 365 + 12 leap days.
    assert.deepStrictEqual(parseRfc3339("0050-01-01T00:00:00Z"), {
      seconds: -62_135_596_800 + (49 * 365 + 12) * 86_400,
      nanos: 0
    })
  })

  it.prop("agrees with Date on millisecond timestamps", [Schema.Int], ([n]) => {
    const ms = Math.abs(n) % (4_000_000_000_000)
    const iso = new Date(ms).toISOString()
    const parsed = parseRfc3339(iso)
    assert.deepStrictEqual(parsed, { seconds: Math.floor(ms / 1000), nanos: (ms % 1000) * 1_000_000 })
  })
})
