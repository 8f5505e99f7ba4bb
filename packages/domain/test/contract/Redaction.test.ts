import { assert, describe, it } from "@effect/vitest"
import {
  isSecretKey,
  publicIdentity,
  publicPath,
  publicText,
  REDACTED,
  redactJson,
  TRUNCATION_MARK
} from "../../src/contract/Redaction.ts"

describe("Redaction", () => {
  it("redacts password assignments, bearer tokens and common key shapes", () => {
    const text = publicText(
      "password=hunter2 api_key: 'abc123' Authorization: Bearer abcdefghijklmnopq sk-abcdefghijklmnopqrstuvwx " +
        "ghp_abcdefghijklmnopqrstuvwxyz0123 AKIAABCDEFGHIJKLMNOP https://user:pa55@example.com",
      10_000
    )
    for (const secret of ["hunter2", "abc123", "abcdefghijklmnopq", "sk-abc", "ghp_abc", "AKIAABCD", "pa55"]) {
      assert.notInclude(text, secret)
    }
    assert.include(text, REDACTED)
  })

  it("drops control characters except newline and tab", () => {
    assert.strictEqual(publicText("a\u001b[31mb\u0007\tc\nd\u009b"), "a[31mb\tc\nd")
  })

  it("truncates to the limit and says so", () => {
    const text = publicText("x".repeat(300))
    assert.strictEqual(text, "x".repeat(240) + TRUNCATION_MARK)
  })

  it("keeps runtime ids and replaces altered identities by a digest", () => {
    const id = "task-0f8fad5b-d9cb-469f-a165-70867728950e"
    assert.strictEqual(publicIdentity(id), id)
    assert.strictEqual(publicIdentity("call_1"), "call_1")
    assert.match(publicIdentity("token=abc"), /^redacted-id-[0-9a-f]{64}$/u)
    assert.match(publicIdentity("i".repeat(300)), /^redacted-id-[0-9a-f]{64}$/u)
  })

  it("marks altered paths with a digest suffix", () => {
    assert.strictEqual(publicPath("src/a.ts"), "src/a.ts")
    assert.match(publicPath(`${"d/".repeat(500)}f`), / \[path-[0-9a-f]{64}\]$/u)
  })

  it("redacts the values of secret-named keys in evidence JSON, at any depth", () => {
    assert.isTrue(isSecretKey("Client-Secret"))
    assert.isFalse(isSecretKey("tokens"))
    assert.deepStrictEqual(
      redactJson({ a: { api_key: "k", list: ["password=p", { refresh_token: 1 }] }, n: 1 }),
      { a: { api_key: REDACTED, list: [`password=${REDACTED}`, { refresh_token: REDACTED }] }, n: 1 }
    )
  })
})
