import { assert, describe, it } from "@effect/vitest"
import { Result, Schema } from "effect"
import { readFileSync } from "node:fs"
import { encodeEvent, encodeLine } from "../../src/contract/Encode.ts"
import {
  decodeEnvelope,
  decodeEvent,
  decodeInputLine,
  decodeLineText,
  EVENT_SCHEMA_VERSION,
  eventTimestamp,
  isKnownEventType,
  KNOWN_EVENT_TYPES,
  ThreadEvent,
  type VersionedThreadEvent
} from "../../src/contract/ThreadEvent.ts"

// Reference fixtures are checked in at the repository root: test/fixtures/reference/ (see PROVENANCE.md there).
const fixturesDir = new URL("../../../../test/fixtures/reference/", import.meta.url)
const fixtureLines = (name: string): Array<string> =>
  readFileSync(new URL(name, fixturesDir), "utf8").split("\n").filter((line) => line.length > 0)

const ok = <A>(result: Result.Result<A, Schema.SchemaError>): A => {
  if (Result.isFailure(result)) assert.fail(result.failure.message)
  return result.success
}

const failureMessage = <A>(result: Result.Result<A, Schema.SchemaError>): string => {
  if (Result.isSuccess(result)) assert.fail(`expected a failure, decoded ${JSON.stringify(result.success)}`)
  return result.failure.message
}

const reencodeEvent = (text: string): string => encodeEvent(ok(decodeEvent(JSON.parse(text))))

const USAGE_ZERO = `{"input_tokens":0,"cached_input_tokens":0,"cache_creation_tokens":0,"output_tokens":0}`

describe("ThreadEvent", () => {
  it("uses schema version 0.18.0", () => {
    assert.strictEqual(EVENT_SCHEMA_VERSION, "0.18.0")
  })

  it("decodes every line of the spec example session and re-encodes it byte for byte", () => {
    const lines = fixtureLines("spec-example-session.events.jsonl")
    assert.strictEqual(lines.length, 10)
    for (const line of lines) {
      const envelope = ok(decodeLineText(line))
      assert.strictEqual(envelope.schema_version, "0.18.0")
      assert.strictEqual(encodeLine(envelope.event), line)
      assert.strictEqual(JSON.stringify(Schema.encodeSync(ThreadEvent)(envelope.event)), encodeEvent(envelope.event))
    }
  })

  it("lists the known event types in declaration order", () => {
    assert.deepStrictEqual(KNOWN_EVENT_TYPES, [
      "matrix.updated",
      "thread.started",
      "thread.completed",
      "thread.compact_boundary",
      "context.reset",
      "turn.started",
      "turn.completed",
      "turn.failed",
      "turn.blocked",
      "item.started",
      "item.updated",
      "item.completed",
      "permission.requested",
      "permission.resolved",
      "interjected",
      "plan.delta",
      "plan.approval.requested",
      "plan.approval.resolved",
      "error"
    ])
    assert.isTrue(isKnownEventType("turn.failed"))
    assert.isFalse(isKnownEventType("tool.called"))
  })

  it.prop(
    "decodeEvent agrees with decoding through the ThreadEvent union",
    [ThreadEvent],
    ([event]) => {
      const wire = JSON.parse(encodeEvent(event))
      const viaUnion = Schema.decodeUnknownResult(ThreadEvent)(wire)
      assert.strictEqual(encodeEvent(ok(decodeEvent(wire))), encodeEvent(ok(viaUnion)))
      const broken = { ...wire, usage: "bogus", item: 7, message: 7, thread_id: 7, spec: 7 }
      assert.strictEqual(
        Result.isSuccess(decodeEvent(broken)),
        Result.isSuccess(Schema.decodeUnknownResult(ThreadEvent)(broken))
      )
    },
    { arbitrary: { runs: 200 } }
  )

  describe("tolerances", () => {
    it("reads missing or null usage counters as zero and writes all four", () => {
      assert.strictEqual(
        reencodeEvent(`{"type":"turn.completed","usage":{}}`),
        `{"type":"turn.completed","usage":${USAGE_ZERO}}`
      )
      assert.strictEqual(
        reencodeEvent(`{"type":"turn.completed","usage":{"input_tokens":null,"output_tokens":7}}`),
        `{"type":"turn.completed","usage":{"input_tokens":0,"cached_input_tokens":0,"cache_creation_tokens":0,"output_tokens":7}}`
      )
    })

    it("still requires the usage object itself where the contract does", () => {
      assert.include(failureMessage(decodeEvent({ type: "turn.completed" })), `["usage"]`)
      assert.include(failureMessage(decodeEvent({ type: "turn.completed", usage: null })), `["usage"]`)
      assert.include(failureMessage(decodeEvent({ type: "turn.completed", usage: [] })), `["usage"]`)
      assert.include(
        failureMessage(decodeEvent({ type: "turn.completed", usage: { output_tokens: -1 } })),
        `["output_tokens"]`
      )
    })

    it("reads unrecognised enum values as unknown where the contract has a catch-all", () => {
      const completed = ok(decodeEvent({
        type: "thread.completed",
        thread_id: "t",
        session_id: "s",
        subtype: "error_new_kind",
        outcome_code: "x",
        usage: {},
        num_turns: 3
      }))
      assert.strictEqual(completed.type === "thread.completed" && completed.subtype, "unknown")
      assert.strictEqual(
        reencodeEvent(
          `{"type":"thread.compact_boundary","thread_id":"t","trigger":"cosmic_ray","mode":"remote",`
            + `"original_message_count":10,"compacted_message_count":2}`
        ),
        `{"type":"thread.compact_boundary","thread_id":"t","trigger":"unknown","mode":"unknown",`
          + `"original_message_count":10,"compacted_message_count":2}`
      )
      assert.strictEqual(
        reencodeEvent(
          `{"type":"plan.approval.resolved","thread_id":"t","turn_id":"u","decision":"defer","automatic":false}`
        ),
        `{"type":"plan.approval.resolved","thread_id":"t","turn_id":"u","decision":"unknown","automatic":false}`
      )
      assert.strictEqual(
        reencodeEvent(
          `{"type":"context.reset","thread_id":"t","turn_id":"u","trigger":"later","plan_preserved":true,`
            + `"previous_context_usage_percent":80,"tool_budget_reset":false}`
        ),
        `{"type":"context.reset","thread_id":"t","turn_id":"u","trigger":"unknown","plan_preserved":true,`
          + `"previous_context_usage_percent":80,"tool_budget_reset":false}`
      )
      assert.include(
        failureMessage(decodeEvent({ type: "permission.resolved", tool_name: "x", decision: "maybe", wait_ms: 1 })),
        `["decision"]`
      )
    })

    it("reads null, missing or empty in_progress_exec_sessions as absent and never writes it empty", () => {
      for (const sessions of [`null`, `[]`]) {
        assert.strictEqual(
          reencodeEvent(`{"type":"turn.completed","usage":{},"in_progress_exec_sessions":${sessions}}`),
          `{"type":"turn.completed","usage":${USAGE_ZERO}}`
        )
      }
      const text = `{"type":"turn.completed","completed_at":"2026-10-03T09:01:00Z","usage":${USAGE_ZERO},`
        + `"in_progress_exec_sessions":["exec-2","exec-1"]}`
      assert.strictEqual(reencodeEvent(text), text)
      assert.strictEqual(
        encodeEvent({
          type: "turn.completed",
          usage: { input_tokens: 0, cached_input_tokens: 0, cache_creation_tokens: 0, output_tokens: 0 },
          in_progress_exec_sessions: []
        }),
        `{"type":"turn.completed","usage":${USAGE_ZERO}}`
      )
    })

    it("reads null optional fields as absent, as serde reads Option fields", () => {
      assert.strictEqual(
        reencodeEvent(`{"type":"turn.failed","completed_at":null,"message":"m","usage":null}`),
        `{"type":"turn.failed","message":"m"}`
      )
      assert.strictEqual(
        reencodeEvent(`{"type":"turn.started","token_breakdown":null,"context":null}`),
        `{"type":"turn.started"}`
      )
    })

    it("writes defaulted turn.blocked counters even when they were missing", () => {
      assert.strictEqual(
        reencodeEvent(`{"type":"turn.blocked","message":"fuse"}`),
        `{"type":"turn.blocked","message":"fuse","blocked_streak":0,"blocked_total":0,"consecutive_cap":0,"total_cap":0,`
          + `"recovery_active":false}`
      )
    })

    it("ignores fields the contract does not define on a known event type", () => {
      assert.strictEqual(
        reencodeEvent(`{"type":"thread.started","thread_id":"t","added_later":{"x":1}}`),
        `{"type":"thread.started","thread_id":"t"}`
      )
    })
  })

  describe("unknown event types", () => {
    it("decodes an unrecognised type as Unknown preserving the type and every other field", () => {
      const event = ok(decodeEvent({ type: "tool.called", anything: 1, nested: { b: [true, null], a: "x" } }))
      assert.deepStrictEqual(event, {
        type: "unknown",
        original_type: "tool.called",
        fields: { anything: 1, nested: { b: [true, null], a: "x" } }
      })
      assert.strictEqual(encodeEvent(event), `{"type":"tool.called","anything":1,"nested":{"b":[true,null],"a":"x"}}`)
    })

    it("re-encodes an Unknown event losslessly, with type first", () => {
      assert.strictEqual(reencodeEvent(`{"z":1,"type":"x.y","a":[{}]}`), `{"type":"x.y","z":1,"a":[{}]}`)
      const canonical = `{"type":"x.y","z":1,"a":[{}]}`
      assert.strictEqual(reencodeEvent(canonical), canonical)
    })

    it("treats a known type with a bad payload as a failure, not as Unknown", () => {
      const message = failureMessage(decodeEvent({ type: "thread.started", thread_id: 123 }))
      assert.include(message, `["thread_id"]`)
      assert.notInclude(message, "original_type")
    })

    it("fails when type is missing or not a string", () => {
      assert.include(failureMessage(decodeEvent({ anything: 1 })), `["type"]`)
      assert.include(failureMessage(decodeEvent({ type: 12 })), `["type"]`)
      assert.include(failureMessage(decodeEvent({ type: null })), `["type"]`)
    })

    it("refuses to encode an Unknown event that claims a known type", () => {
      const forged: ThreadEvent = { type: "unknown", original_type: "turn.started", fields: {} }
      assert.isTrue(Result.isFailure(Schema.encodeResult(ThreadEvent)(forged)))
    })

    it("fails an unknown item type inside a known item event", () => {
      assert.include(
        failureMessage(decodeEvent({ type: "item.completed", item: { id: "x", type: "hologram" } })),
        `["item"]`
      )
    })
  })

  describe("matrix.updated", () => {
    const taskSpec = `{"id":"repair","instructions":"fix it","dependencies":[],"workspace":"src","access":"write",`
      + `"checks":["npm test"],"resources":{"cpu":1},"timeout_secs":600,"replay_safe":false,"inputs":["src/a.ts"]}`
    const evidence = `{"command":"npm test","attempt_id":"a2","worker_id":"w2","generation":"g1","event_id":"e1",`
      + `"exit_code":0,"cancelled":false}`
    const attempts = `[{"id":"a1","worker_id":"w1","phase":"execute","generation":null,"launch_requested":true,`
      + `"outcome":"success","cleanup_confirmed":true,"evidence":[]},`
      + `{"id":"a2","worker_id":"w2","phase":"verify","generation":"g1","launch_requested":true,`
      + `"outcome":null,"cleanup_confirmed":false,"evidence":[${evidence}]}]`
    const text =
      `{"type":"matrix.updated","spec":{"id":"workspace-checks","tasks":[${taskSpec}],"resources":{"cpu":2}},`
      + `"lifecycle":"verifying","tasks":[{"id":"repair","status":"assigned","attempts":${attempts},`
      + `"automatic_retries":0}],"generation":"g1","revision":7}`

    it("decodes the snapshot fields inline and re-encodes them byte for byte", () => {
      const event = ok(decodeEvent(JSON.parse(text)))
      assert.strictEqual(event.type, "matrix.updated")
      if (event.type !== "matrix.updated") return
      assert.strictEqual(event.spec.tasks[0]?.timeout_secs, 600)
      assert.strictEqual(event.tasks[0]?.attempts[1]?.evidence[0]?.exit_code, 0)
      assert.strictEqual(reencodeEvent(text), text)
      assert.strictEqual(JSON.stringify(Schema.encodeSync(ThreadEvent)(event)), text)
    })

    it("reads missing nullable fields as null and missing defaulted spec fields as empty, then writes them all", () => {
      const sparse = text.replace(`"generation":"g1","revision"`, `"revision"`)
        .replace(`"phase":"execute","generation":null,`, `"phase":"execute",`)
        .replace(`"outcome":null,`, "")
        .replace(`"exit_code":0,`, "")
        .replace(`"dependencies":[],`, "")
        .replace(`,"replay_safe":false,"inputs":["src/a.ts"]`, "")
        .replace(`,"resources":{"cpu":2}}`, "}")
      const expected = text.replace(`"generation":"g1","revision"`, `"generation":null,"revision"`)
        .replace(`"exit_code":0,`, `"exit_code":null,`)
        .replace(`"inputs":["src/a.ts"]`, `"inputs":[]`)
        .replace(`"resources":{"cpu":2}}`, `"resources":{}}`)
      assert.strictEqual(reencodeEvent(sparse), expected)
    })

    it("rejects a payload whose shape breaks the snapshot contract, naming the path", () => {
      const value = JSON.parse(text)
      assert.include(failureMessage(decodeEvent({ ...value, spec: { tasks: [] } })), `["spec"]["id"]`)
      assert.include(failureMessage(decodeEvent({ ...value, revision: -1 })), `["revision"]`)
      assert.include(failureMessage(decodeEvent({ ...value, lifecycle: "sleeping" })), `["lifecycle"]`)
      assert.include(
        failureMessage(decodeEvent({ ...value, tasks: [{ ...value.tasks[0], automatic_retries: 256 }] })),
        `["tasks"][0]["automatic_retries"]`
      )
    })
  })

  describe("envelopes and bad input", () => {
    it("accepts any schema_version string and rejects a non-string one", () => {
      const envelope: VersionedThreadEvent = ok(
        decodeEnvelope({ schema_version: "0.11.0", event: { type: "turn.started" } })
      )
      assert.strictEqual(envelope.schema_version, "0.11.0")
      assert.include(
        failureMessage(decodeEnvelope({ schema_version: 1, event: { type: "turn.started" } })),
        `["schema_version"]`
      )
      assert.include(failureMessage(decodeEnvelope({ schema_version: "1" })), `["event"]`)
    })

    it("reports nested failures with the full path from the envelope", () => {
      assert.include(
        failureMessage(
          decodeEnvelope({ schema_version: "1", event: { type: "turn.completed", usage: { input_tokens: "x" } } })
        ),
        `["event"]["usage"]["input_tokens"]`
      )
      assert.include(
        failureMessage(
          decodeEnvelope({
            schema_version: "1",
            event: { type: "item.started", item: { id: "c", type: "file_change", changes: [7], status: "failed" } }
          })
        ),
        `["event"]["item"]["changes"][0]`
      )
    })

    it.prop(
      "never throws on arbitrary JSON values and rejects the ones that are not events",
      [Schema.Json],
      ([value]) => {
        const event = decodeEvent(value)
        const envelope = decodeEnvelope(value)
        const looksLikeEvent = typeof value === "object" && value !== null && !Array.isArray(value) && "type" in value
        if (!looksLikeEvent) {
          assert.isTrue(Result.isFailure(event))
          assert.isTrue(Result.isFailure(envelope))
        }
      },
      { arbitrary: { runs: 300 } }
    )

    it("fails root-level junk with a readable message instead of throwing", () => {
      for (const junk of [5, "x", null, [], [{ type: "turn.started" }], true, undefined]) {
        assert.include(failureMessage(decodeEvent(junk)), "Expected object")
        assert.include(failureMessage(decodeEnvelope(junk)), "Expected object")
      }
    })

    it("reports invalid JSON text as a SchemaError with the parser's message", () => {
      const result = decodeLineText("not json at all")
      assert.isTrue(Result.isFailure(result))
      if (Result.isFailure(result)) {
        assert.isTrue(Schema.isSchemaError(result.failure))
        assert.include(result.failure.message, "Expected JSON text")
      }
      assert.isTrue(Result.isFailure(decodeLineText("")))
      assert.isTrue(Result.isSuccess(decodeLineText(`{"schema_version":"x","event":{"type":"turn.started"}}\n`)))
    })
  })

  describe("eventTimestamp", () => {
    const lines = fixtureLines("spec-example-session.events.jsonl").map((line) => ok(decodeLineText(line)).event)

    it("reads the recorded context timestamp of turn.started and item events", () => {
      assert.deepStrictEqual(lines.map(eventTimestamp), [
        undefined,
        "2026-10-03T09:00:00Z",
        "2026-10-03T09:00:02Z",
        "2026-10-03T09:00:09Z",
        undefined,
        undefined,
        undefined,
        undefined,
        undefined,
        undefined
      ])
    })
  })

  describe("u64 counts", () => {
    const U64_MAX = 18446744073709551615n
    /** A turn.completed line whose input_tokens is the literal `tokens`, exactly as written. */
    const completedWith = (tokens: string): string =>
      `{"schema_version":"0.18.0","event":{"type":"turn.completed","usage":{"input_tokens":${tokens},` +
      `"cached_input_tokens":0,"cache_creation_tokens":0,"output_tokens":1}}}`
    const inputTokens = (line: string): number => {
      const event = ok(decodeLineText(line)).event
      return event.type === "turn.completed" ? event.usage.input_tokens : assert.fail(event.type)
    }

    it("accepts counts beyond 2^53 up to u64's maximum, as the nearest double", () => {
      assert.strictEqual(inputTokens(completedWith("9007199254740993")), 9007199254740992)
      assert.strictEqual(inputTokens(completedWith("18446744073709551615")), 2 ** 64)
      assert.strictEqual(inputTokens(completedWith("18446744073709550593")), 2 ** 64)
    })

    it("accepts 1.0 and 1e3 as integral counts (JSON.parse cannot tell them from 1 and 1000)", () => {
      assert.strictEqual(inputTokens(completedWith("1.0")), 1)
      assert.strictEqual(inputTokens(completedWith("1e3")), 1000)
      assert.strictEqual(inputTokens(completedWith("1.8446744073709551615e19")), 2 ** 64)
    })

    it("rejects counts above u64's maximum, also those that parse to the same double, naming the field", () => {
      for (
        const tokens of [
          "18446744073709551616",
          "18446744073709553664",
          "18446744073709551615.5",
          "1.8446744073709551616e19",
          "184467440737095516.16e2",
          "18446744073709551616000e-3",
          "18446744073709555712",
          "1e20",
          "-1",
          "1.5"
        ]
      ) {
        const message = failureMessage(decodeLineText(completedWith(tokens)))
        assert.include(message, `["event"]["usage"]["input_tokens"]`, tokens)
      }
    })

    it.prop(
      "decodes an integer literal exactly when it is at most u64's maximum",
      [Schema.BigInt.check(Schema.isBetweenBigInt({ minimum: U64_MAX - 5000n, maximum: U64_MAX + 5000n }))],
      ([n]) => {
        const decoded = decodeLineText(completedWith(n.toString()))
        assert.strictEqual(Result.isSuccess(decoded), n <= U64_MAX, n.toString())
      },
      { arbitrary: { runs: 300 } }
    )

    it("keeps a number field that is not a u64 valid when its literal is above u64's maximum", () => {
      const line = `{"schema_version":"0.18.0","event":{"type":"thread.completed","thread_id":"t","session_id":"s",` +
        `"subtype":"success","outcome_code":"completed","usage":{"input_tokens":18446744073709551615,` +
        `"cached_input_tokens":0,"cache_creation_tokens":0,"output_tokens":0},` +
        `"total_cost_usd":18446744073709551616,"num_turns":1}}`
      const event = ok(decodeLineText(line)).event
      assert.strictEqual(event.type === "thread.completed" ? event.usage.input_tokens : 0, 2 ** 64)
      assert.isAtLeast(event.type === "thread.completed" ? (event.total_cost_usd ?? 0) : 0, 2 ** 64)
    })
  })
})

describe("decodeInputLine", () => {
  const bytes = (text: string) => new TextEncoder().encode(text)
  const tagOf = (text: string | Uint8Array) => {
    const decoded = decodeInputLine(typeof text === "string" ? bytes(text) : text)
    return Result.isFailure(decoded) ? decoded.failure._tag : "ok"
  }

  it("reads a bare event and the event of an envelope, whitespace and newline trimmed", () => {
    assert.deepStrictEqual(
      decodeInputLine(bytes(" {\"type\":\"turn.started\"}\r\n")),
      Result.succeed({ type: "turn.started" })
    )
    assert.deepStrictEqual(
      decodeInputLine(bytes("{\"schema_version\":\"0.18.0\",\"event\":{\"type\":\"turn.started\"}}\n")),
      Result.succeed({ type: "turn.started" })
    )
    assert.deepStrictEqual(decodeInputLine(bytes("  \t\n")), Result.succeed(undefined))
  })

  it("names why a line holds no event", () => {
    assert.strictEqual(tagOf(new Uint8Array([0x7b, 0xff, 0x7d])), "NotUtf8")
    assert.strictEqual(tagOf("{not json"), "NotJson")
    assert.strictEqual(tagOf("\ufeff{\"type\":\"turn.started\"}"), "NotJson")
    assert.strictEqual(tagOf("[1,2]"), "NotObject")
    assert.strictEqual(tagOf("{\"type\":\"turn.completed\",\"usage\":[]}"), "Invalid")
    assert.strictEqual(tagOf("{\"schema_version\":\"0.18.0\",\"event\":{\"type\":\"turn.failed\"}}"), "Invalid")
    assert.strictEqual(tagOf("{\"kind\":\"turn.started\"}"), "NoEventShape")
  })
})
