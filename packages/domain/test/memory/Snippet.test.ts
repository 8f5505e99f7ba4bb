/**
 * Search result snippets (docs/search.md#ranking): a bounded, whitespace-flattened window around
 * the first word matching the query, that never cuts a surrogate pair.
 */
import { assert, describe, it } from "@effect/vitest"
import { Schema } from "effect"
import { tokenize } from "../../src/contract/SearchText.ts"
import { firstMatch, snippetAround } from "../../src/memory/Snippet.ts"

const PIECES = [
  "fix",
  "Websocket",
  "😀",
  "日本語",
  "a😀b",
  " ",
  "\n\t",
  ".",
  "-",
  "x",
  "naïve",
  "𝔘𝔫𝔦",
  "42",
  "reconnect"
]
const TERMS = ["fix", "websocket", "日本語", "x", "naïve", "𝔲𝔫𝔦", "42", "reconnect", "absent"]

const Text = Schema.Array(Schema.Literals(PIECES)).check(Schema.isMinLength(10), Schema.isMaxLength(200))
const Terms = Schema.Array(Schema.Literals(TERMS)).check(Schema.isMaxLength(3))
const Max = Schema.Int.check(Schema.isBetween({ minimum: 12, maximum: 120 }))

const LONE_SURROGATE = /\p{Cs}/u

describe("snippetAround", () => {
  it("returns a short text whole, whitespace flattened", () => {
    assert.strictEqual(snippetAround("  Fixed the\n\twebsocket  ", new Set(["websocket"]), 40), "Fixed the websocket")
  })

  it("centres a long text on the first matching word and marks both cuts", () => {
    const text = `${"lorem ipsum ".repeat(40)}the websocket reconnect fix ${"dolor sit ".repeat(40)}`
    const snippet = snippetAround(text, new Set(["websocket"]), 60)
    assert.isAtMost(snippet.length, 60)
    assert.isTrue(snippet.startsWith("…"))
    assert.isTrue(snippet.endsWith("…"))
    assert.include(snippet, "the websocket reconnect fix")
  })

  it("falls back to the start when no word matches", () => {
    const text = "alpha beta gamma ".repeat(20)
    assert.strictEqual(snippetAround(text, new Set(["zeta"]), 20), "alpha beta gamma al…")
    assert.strictEqual(snippetAround(text, new Set(), 20), "alpha beta gamma al…")
  })

  it("matches whole words case-insensitively", () => {
    assert.deepStrictEqual(firstMatch("Prefix FIX fix", new Set(["fix"])), { index: 7, length: 3 })
    assert.isUndefined(firstMatch("prefix suffix", new Set(["fix"])))
  })

  it("does not cut a surrogate pair at either end", () => {
    const text = `${"😀".repeat(30)}websocket${"😀".repeat(30)}`
    for (let max = 12; max < 40; max++) {
      const snippet = snippetAround(text, new Set(["websocket"]), max)
      assert.notMatch(snippet, LONE_SURROGATE)
      assert.isAtMost(snippet.length, max)
      assert.include(snippet, "websocket")
    }
  })

  it.prop("is bounded, keeps a matched word and never splits a surrogate pair", [Text, Terms, Max], (
    [pieces, terms, max]
  ) => {
    const text = pieces.join("")
    const set = new Set(terms)
    const snippet = snippetAround(text, set, max)
    assert.isAtMost(snippet.length, max)
    assert.notMatch(snippet, LONE_SURROGATE)
    const flat = text.replace(/\s+/gu, " ").trim()
    const match = firstMatch(flat, set)
    if (match !== undefined && match.length <= max - 2) {
      assert.isTrue(tokenize(snippet).some((t) => set.has(t)), `${JSON.stringify(snippet)} lacks ${[...set]}`)
    }
    if (flat.length <= max) assert.strictEqual(snippet, flat)
  })
})
