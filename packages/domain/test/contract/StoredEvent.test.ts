/**
 * The stored text of an event: a line's `event` member cut out exactly (strings holding braces,
 * deep nesting, duplicate keys as `JSON.parse` reads them), and used only when the canonical
 * encoding of the parsed event cannot be exact.
 */
import { assert, describe, it } from "@effect/vitest"
import { decodeLineText, exactStoredEventText, memberText } from "@logbook/domain"
import type { ThreadEvent } from "@logbook/domain"
import { Result } from "effect"

const bytes = (text: string) => new TextEncoder().encode(text)

const eventOf = (line: string): ThreadEvent => {
  const decoded = decodeLineText(line.trimEnd())
  assert.isTrue(Result.isSuccess(decoded))
  return Result.isSuccess(decoded) ? decoded.success.event : { type: "turn.started" }
}

describe("StoredEvent", () => {
  it("memberText cuts out the last top-level member, whatever its strings and nesting hold", () => {
    assert.strictEqual(
      memberText(`{"a":1,"event":{"s":"}\\"{","n":[1,{"x":[]}]}}\n`, "event"),
      `{"s":"}\\"{","n":[1,{"x":[]}]}`
    )
    assert.strictEqual(memberText(`{ "event" : 1 , "event" : {"b":2} }`, "event"), `{"b":2}`)
    assert.strictEqual(memberText(`{"\\u0065vent":true}`, "event"), "true")
    assert.strictEqual(memberText(`{"other":1}`, "event"), undefined)
    assert.strictEqual(memberText(`[1]`, "event"), undefined)
    const deep = `{"event":${"[".repeat(100_000)}${"]".repeat(100_000)}}`
    assert.strictEqual(memberText(deep, "event")?.length, 200_000)
  })

  it("exactStoredEventText gives the stored digits of a count beyond 2^53 and nothing for an exact event", () => {
    const big =
      `{"schema_version":"0.18.0","event":{"type":"turn.completed","usage":{"input_tokens":9007199254740993,` +
      `"cached_input_tokens":0,"cache_creation_tokens":0,"output_tokens":3}}}\n`
    assert.strictEqual(
      exactStoredEventText(eventOf(big), bytes(big)),
      `{"type":"turn.completed","usage":{"input_tokens":9007199254740993,"cached_input_tokens":0,` +
        `"cache_creation_tokens":0,"output_tokens":3}}`
    )
    const small = `{"schema_version":"0.18.0","event":{"type":"error","message":"1234567890123456789"}}\n`
    assert.strictEqual(exactStoredEventText(eventOf(small), bytes(small)), undefined)
  })
})
