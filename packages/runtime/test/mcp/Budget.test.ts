/**
 * The budget and cursor of `logbook mcp` results: integer arguments checked against their range,
 * cursors that round-trip and refuse anything else, pages that fit their budget and continue
 * where they stopped.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import {
  budgetChars,
  decodeCursor,
  encodeCursor,
  intArgument,
  jsonSize,
  pageItems,
  pageText,
  trimText
} from "../../src/mcp/Budget.ts"

describe("Budget", () => {
  it.effect("an integer argument outside its range fails with its name, range and value", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* intArgument("limit", undefined, 6, 1, 100), 6)
      for (const bad of [-1, 0, 101, 2.5, Number.NaN, 1e300]) {
        const error = yield* Effect.flip(intArgument("limit", bad, 6, 1, 100))
        assert.include(error.message, "limit must be an integer from 1 to 100")
      }
      assert.strictEqual(yield* budgetChars(undefined), 16_000)
      assert.include((yield* Effect.flip(budgetChars(100_000))).message, "max_tokens")
    }))

  it.effect("a cursor round-trips for its own tool and question and is refused for any other", () =>
    Effect.gen(function*() {
      const cursor = encodeCursor({ tool: "search", key: "[\"q\"]", at: 7, now: 1_800_000_000 })
      assert.deepStrictEqual(yield* decodeCursor("search", "[\"q\"]", cursor), {
        tool: "search",
        key: "[\"q\"]",
        at: 7,
        now: 1_800_000_000
      })
      assert.isUndefined(yield* decodeCursor("search", "[\"q\"]", undefined))
      const refusals = [
        ["facts", "[\"q\"]", cursor, /continues search, not facts/u],
        ["search", "[\"other\"]", cursor, /other arguments/u],
        ["search", "[\"q\"]", "%%%", /not a cursor/u],
        ["search", "[\"q\"]", Buffer.from("{\"tool\":\"search\"}").toString("base64url"), /not a cursor/u],
        ["search", "[\"q\"]", encodeCursor({ tool: "search", key: "[\"q\"]", at: -2 }), /negative/u],
        ["search", "[\"q\"]", "A".repeat(5000), /not a cursor/u]
      ] as const
      for (const [tool, key, bad, expected] of refusals) {
        const error = yield* Effect.flip(decodeCursor(tool, key, bad))
        assert.match(error.message, expected)
      }
    }))

  it("pages hold at least one item, fit the budget otherwise, and continue where they stopped", () => {
    const items = Array.from({ length: 50 }, (_, i) => ({ n: i, text: "x".repeat(i * 7) }))
    const seen: Array<number> = []
    let at: number | undefined = 0
    while (at !== undefined) {
      const page: ReturnType<typeof pageItems<(typeof items)[number]>> = pageItems(items, at, 300)
      assert.isAbove(page.items.length, 0)
      const size = page.items.reduce((n, item) => n + jsonSize(item), 0)
      assert.isTrue(page.items.length === 1 || size <= 300)
      seen.push(...page.items.map((item) => item.n))
      at = page.next
    }
    assert.deepStrictEqual(seen, items.map((item) => item.n))
  })

  it("text pages fit the budget once JSON-escaped and join back to the text", () => {
    const text = "quote \" and newline \n and tab \t ".repeat(200)
    const parts: Array<string> = []
    let at: number | undefined = 0
    while (at !== undefined) {
      const page: ReturnType<typeof pageText> = pageText(text, at, 500)
      assert.isAtMost(jsonSize(page.text), 500)
      assert.strictEqual(page.total, text.length)
      parts.push(page.text)
      at = page.next
    }
    assert.strictEqual(parts.join(""), text)
    assert.strictEqual(trimText("abc", 5), "abc")
    assert.strictEqual(trimText("abcdefgh", 3), "abc… [5 more characters]")
  })
})
