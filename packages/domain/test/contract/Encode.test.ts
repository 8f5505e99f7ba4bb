import { assert, describe, it } from "@effect/vitest"
import { Result, Schema } from "effect"
import { encodeEvent, encodeEventForDisplay, encodeLine } from "../../src/contract/Encode.ts"
import {
  decodeLineText,
  EVENT_SCHEMA_VERSION,
  ThreadEvent,
  VersionedThreadEvent
} from "../../src/contract/ThreadEvent.ts"

/** The reference form the fast encoder must match: the Schema's canonical encoding, stringified. */
const schemaLine = (event: ThreadEvent): string =>
  JSON.stringify(Schema.encodeSync(VersionedThreadEvent)({ schema_version: EVENT_SCHEMA_VERSION, event }))

const assertCanonical = (event: ThreadEvent): void => {
  const line = encodeLine(event)
  assert.strictEqual(line, schemaLine(event))
  const decoded = decodeLineText(line)
  if (Result.isFailure(decoded)) assert.fail(`${decoded.failure.message}\n${line}`)
  assert.strictEqual(decoded.success.schema_version, EVENT_SCHEMA_VERSION)
  assert.strictEqual(encodeLine(decoded.success.event), line)
}

describe("Encode", () => {
  it.prop(
    "the fast encoder equals the Schema's canonical encoding and round-trips for arbitrary events",
    [ThreadEvent],
    ([event]) => assertCanonical(event),
    { arbitrary: { runs: 400 } }
  )

  ThreadEvent.members.forEach((member, i) => {
    it.prop(
      `${ThreadEvent.discriminants[i]} events encode canonically and round-trip to identical bytes`,
      [member],
      ([event]) => assertCanonical(event),
      { arbitrary: { runs: 40 } }
    )
  })

  it("writes the envelope with the current schema version first and no trailing newline", () => {
    const line = encodeLine({ type: "turn.started" })
    assert.strictEqual(line, `{"schema_version":"0.18.0","event":{"type":"turn.started"}}`)
    assert.isFalse(line.endsWith("\n"))
  })

  it("embeds exactly the bare event encoding in the envelope", () => {
    const event: ThreadEvent = { type: "error", message: "line one\nline \"two\" \u2028 \ud800" }
    assert.strictEqual(encodeLine(event), `{"schema_version":"0.18.0","event":${encodeEvent(event)}}`)
    assert.strictEqual(encodeEvent(event), JSON.stringify({ type: "error", message: event.message }))
  })

  it("writes numbers exactly as JSON does, negative zero included", () => {
    const event: ThreadEvent = {
      type: "thread.completed",
      thread_id: "t",
      session_id: "s",
      subtype: "success",
      outcome_code: "completed",
      usage: { input_tokens: -0, cached_input_tokens: 1e15, cache_creation_tokens: 0, output_tokens: 9007199254740991 },
      total_cost_usd: 0.000125,
      num_turns: 2
    }
    assertCanonical(event)
    assert.include(encodeEvent(event), `"input_tokens":0,`)
    assert.include(encodeEvent(event), `"total_cost_usd":0.000125,`)
  })

  it("omits optional fields that are absent and writes them in declaration order when present", () => {
    assert.strictEqual(
      encodeEvent({
        type: "turn.failed",
        completed_at: "2026-10-03T09:05:00Z",
        message: "provider rate limit",
        usage: { input_tokens: 1, cached_input_tokens: 2, cache_creation_tokens: 3, output_tokens: 4 }
      }),
      `{"type":"turn.failed","completed_at":"2026-10-03T09:05:00Z","message":"provider rate limit",`
        + `"usage":{"input_tokens":1,"cached_input_tokens":2,"cache_creation_tokens":3,"output_tokens":4}}`
    )
    assert.strictEqual(encodeEvent({ type: "turn.failed", message: "m" }), `{"type":"turn.failed","message":"m"}`)
  })

  it("refuses to write a count it cannot write exactly (beyond 2^53 - 1), naming the field", () => {
    const usage = { input_tokens: 2 ** 53, cached_input_tokens: 0, cache_creation_tokens: 0, output_tokens: 0 }
    assert.throws(() => encodeLine({ type: "turn.completed", usage }), /input_tokens is 9007199254740992/)
    assert.throws(
      () => encodeLine({ type: "permission.resolved", tool_name: "t", decision: "allow", wait_ms: 2 ** 64 }),
      /wait_ms is 18446744073709552000/
    )
    assert.throws(
      () =>
        encodeEvent({
          type: "item.completed",
          item: { id: "h", type: "harness", event: "planning_started", duration_ms: 1e300 }
        }),
      /duration_ms/
    )
    const exact = { ...usage, input_tokens: 2 ** 53 - 1 }
    assert.include(encodeLine({ type: "turn.completed", usage: exact }), `"input_tokens":9007199254740991,`)
  })

  it("shows an event read with a count beyond 2^53 - 1 with the nearest value, in canonical key order", () => {
    const decoded = decodeLineText(
      `{"schema_version":"0.18.0","event":{"type":"turn.completed","usage":{"output_tokens":2,` +
        `"input_tokens":18446744073709551615,"cached_input_tokens":0,"cache_creation_tokens":0}}}`
    )
    if (Result.isFailure(decoded)) return assert.fail(decoded.failure.message)
    assert.strictEqual(
      encodeEventForDisplay(decoded.success.event),
      `{"type":"turn.completed","usage":{"input_tokens":18446744073709552000,"cached_input_tokens":0,` +
        `"cache_creation_tokens":0,"output_tokens":2}}`
    )
    const plain: ThreadEvent = { type: "turn.started" }
    assert.strictEqual(encodeEventForDisplay(plain), encodeEvent(plain))
  })
})
