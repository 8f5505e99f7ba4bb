/**
 * The search tokeniser (docs/search.md#tokens): Unicode letters and digits make tokens, everything
 * else separates them, tokens are lowercased and duplicates kept.
 */
import { assert, describe, it } from "@effect/vitest"
import { distinctTokens, termFrequencies, tokenize } from "../../src/contract/SearchText.ts"

describe("tokenize", () => {
  it("splits on punctuation, paths and whitespace and lowercases", () => {
    assert.deepStrictEqual(tokenize("Fixed src/Foo.ts: npm-test FAILED (exit 1)"), [
      "fixed",
      "src",
      "foo",
      "ts",
      "npm",
      "test",
      "failed",
      "exit",
      "1"
    ])
  })

  it("keeps non-Latin letters and digits together and drops underscores", () => {
    assert.deepStrictEqual(tokenize("Ärger_über café ٣٤ 日本語"), ["ärger", "über", "café", "٣٤", "日本語"])
  })

  it("yields no tokens for empty and punctuation-only text", () => {
    assert.deepStrictEqual(tokenize(""), [])
    assert.deepStrictEqual(tokenize("  --- ,,, !!! _ "), [])
  })

  it("keeps duplicates in order, and distinctTokens removes them", () => {
    assert.deepStrictEqual(tokenize("fix the fix"), ["fix", "the", "fix"])
    assert.deepStrictEqual(distinctTokens("fix the Fix"), ["fix", "the"])
  })
})

describe("termFrequencies", () => {
  it("counts each token and the document length with duplicates, as tokenize splits", () => {
    const { length, tf } = termFrequencies("Test the test; TEST src/Foo.ts")
    assert.strictEqual(length, 7)
    assert.deepStrictEqual([...tf], [["test", 3], ["the", 1], ["src", 1], ["foo", 1], ["ts", 1]])
    assert.deepStrictEqual(termFrequencies(" -- "), { tf: new Map(), length: 0 })
  })
})
