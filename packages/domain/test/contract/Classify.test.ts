import { assert, describe, it } from "@effect/vitest"
import { Result, Schema } from "effect"
import { readFileSync } from "node:fs"
import {
  classifyAndDecodeLine,
  classifyEncodedLine,
  classifyLine,
  type LineClass,
  skipReason
} from "../../src/contract/Classify.ts"
import { encodeLine } from "../../src/contract/Encode.ts"
import { lifecycleKindOf } from "../../src/contract/LifecycleKind.ts"
import { decodeLineText, ThreadEvent } from "../../src/contract/ThreadEvent.ts"
import { exceedsJsonDepth, MAX_JSON_DEPTH } from "../../src/internal/jsonText.ts"

// Reference fixtures are checked in at the repository root: test/fixtures/reference/ (see PROVENANCE.md there).
const fixturesDir = new URL("../../../../test/fixtures/reference/", import.meta.url)
const fixtureLines = (name: string): Array<string> =>
  readFileSync(new URL(name, fixturesDir), "utf8").split("\n").filter((line) => line.length > 0)

const utf8 = new TextEncoder()

/** Classifies the text and its UTF-8 bytes, asserting both agree; drops the envelope for comparisons. */
const classify = (line: string): LineClass => {
  const fromText = classifyLine(line)
  const fromBytes = classifyLine(utf8.encode(line))
  assert.deepStrictEqual(fromBytes, fromText)
  return fromText._tag === "Skip" ? fromText : { _tag: "Counted", type: fromText.type, lifecycle: fromText.lifecycle }
}

const SKIP: LineClass = { _tag: "Skip" }
const counted = (type: string): LineClass => ({ _tag: "Counted", type, lifecycle: lifecycleKindOf(type) })

describe("classifyLine", () => {
  it("skips every line the spec says a scan must skip", () => {
    const mustSkip = [
      `{"schema_version":1,"event":{"type":"turn.started"}}`,
      `{"schema_version":"0.18.0","event":{"type":"thread.started","thread_id":123}}`,
      `{"schema_version":"0.18.0","event":{"type":"turn.started","token_breakdown":"bogus"}}`,
      `{"schema_version":"0.18.0","event":{"type":"turn.completed","usage":"bogus"}}`,
      `{"schema_version":"0.18.0","event":{"type":"turn.completed","usage":[]}}`,
      `{"schema_version":"0.18.0","event":{"type":"turn.completed"}}`,
      `{"schema_version":"0.18.0","event":{"type":"turn.failed"}}`,
      `not json at all`
    ]
    for (const line of mustSkip) assert.deepStrictEqual(classify(line), SKIP, line)
  })

  it("skips the malformed lifecycle lines of the reference test suite", () => {
    const lines = fixtureLines("vtcode-scan-malformed-lifecycle-lines.jsonl")
    assert.strictEqual(lines.length, 3)
    for (const line of lines) assert.deepStrictEqual(classify(line), SKIP, line)
  })

  it("counts the v1 fixture's empty usage object as a turn completion under schema 0.18.0", () => {
    const lines = fixtureLines("vtcode-scan-malformed-lifecycle-lines.v1.jsonl")
    assert.deepStrictEqual(lines.map(classify), [SKIP, SKIP, counted("turn.completed")])
    assert.deepStrictEqual(classify(lines[2] ?? ""), {
      _tag: "Counted",
      type: "turn.completed",
      lifecycle: "turn_completed"
    })
  })

  it("counts a line with an unknown item type as other, although it fails full decoding", () => {
    const line = `{"schema_version":"0.18.0","event":{"type":"item.completed","item":{"id":"x","type":"hologram"}}}`
    assert.deepStrictEqual(classify(line), { _tag: "Counted", type: "item.completed", lifecycle: "other" })
    assert.isTrue(Result.isFailure(decodeLineText(line)))
  })

  it("counts an unknown event type, which decodes as Unknown preserving its fields", () => {
    const line = `{"schema_version":"0.18.0","event":{"type":"tool.called","anything":1}}`
    assert.deepStrictEqual(classify(line), { _tag: "Counted", type: "tool.called", lifecycle: "other" })
    const decoded = decodeLineText(line)
    assert.isTrue(Result.isSuccess(decoded))
    if (Result.isSuccess(decoded)) {
      assert.deepStrictEqual(decoded.success.event, {
        type: "unknown",
        original_type: "tool.called",
        fields: { anything: 1 }
      })
      assert.strictEqual(encodeLine(decoded.success.event), line)
    }
  })

  it("skips bare Codex lines, which have no envelope", () => {
    const lines = fixtureLines("codex-exec-json-sample.jsonl")
    assert.strictEqual(lines.length, 8)
    for (const line of lines) assert.deepStrictEqual(classify(line), SKIP, line)
  })

  it("classifies the spec example session with its lifecycle kinds", () => {
    const classes = fixtureLines("spec-example-session.events.jsonl").map(classify)
    assert.deepStrictEqual(classes.map((c) => c._tag === "Counted" ? c.lifecycle : "skip"), [
      "thread_started",
      "turn_started",
      "other",
      "other",
      "other",
      "other",
      "turn_completed",
      "turn_started",
      "turn_failed",
      "thread_completed"
    ])
  })

  it("hands lifecycle lines their decoded envelope and other lines none", () => {
    const [threadStarted, turnStarted, itemStarted] = fixtureLines("spec-example-session.events.jsonl")
    const started = classifyLine(turnStarted ?? "")
    assert.isTrue(started._tag === "Counted" && started.envelope?.event.type === "turn.started")
    if (started._tag === "Counted" && started.envelope?.event.type === "turn.started") {
      assert.strictEqual(started.envelope.event.context?.timestamp, "2026-10-03T09:00:00Z")
    }
    const thread = classifyLine(threadStarted ?? "")
    assert.isTrue(thread._tag === "Counted" && thread.envelope !== undefined)
    const item = classifyLine(itemStarted ?? "")
    assert.isTrue(item._tag === "Counted" && item.envelope === undefined)
  })

  it("counts non-lifecycle lines on envelope and type alone", () => {
    for (
      const event of [
        `{"type":"item.completed","item":"garbage"}`,
        `{"type":"thread.compact_boundary"}`,
        `{"type":"turn.blocked","message":7}`,
        `{"type":"matrix.updated","spec":null}`
      ]
    ) {
      const line = `{"schema_version":"any","event":${event}}`
      assert.strictEqual(classify(line)._tag, "Counted", line)
      assert.isTrue(Result.isFailure(decodeLineText(line)), line)
    }
  })

  it("requires a string schema_version and an event object with a string type", () => {
    for (
      const line of [
        `{"event":{"type":"item.started"}}`,
        `{"schema_version":null,"event":{"type":"item.started"}}`,
        `{"schema_version":"x"}`,
        `{"schema_version":"x","event":null}`,
        `{"schema_version":"x","event":["item.started"]}`,
        `{"schema_version":"x","event":"item.started"}`,
        `{"schema_version":"x","event":{"kind":"item.started"}}`,
        `{"schema_version":"x","event":{"type":1}}`,
        `["x",{"type":"item.started"}]`,
        `"text"`,
        `null`,
        `{"schema_version":"x","event":{"type":"item.started"}} trailing`
      ]
    ) assert.deepStrictEqual(classify(line), SKIP, line)
  })

  it("checks the raw shape of turn.completed usage before decoding it", () => {
    assert.deepStrictEqual(classify(`{"schema_version":"x","event":{"type":"turn.completed","usage":null}}`), SKIP)
    assert.deepStrictEqual(
      classify(`{"schema_version":"x","event":{"type":"turn.completed","usage":{"input_tokens":null}}}`),
      counted("turn.completed")
    )
  })

  it("skips empty, whitespace-only, zero-filled and invalid UTF-8 lines", () => {
    assert.deepStrictEqual(classifyLine(new Uint8Array(64)), SKIP)
    for (const line of ["", "\n", "  \t\r\n", "\u3000\u0085"]) {
      assert.deepStrictEqual(classify(line), SKIP, JSON.stringify(line))
    }
    const valid = utf8.encode(`{"schema_version":"x","event":{"type":"item.started"}}`)
    const broken = Uint8Array.from([...valid.slice(0, 10), 0xff, ...valid.slice(10)])
    assert.deepStrictEqual(classifyLine(broken), SKIP)
    const truncated = Uint8Array.from([
      ...utf8.encode(`{"schema_version":"x","event":{"type":"item.started","t":"`),
      0xe2,
      0x82
    ])
    assert.deepStrictEqual(classifyLine(truncated), SKIP)
  })

  it("trims whitespace as Rust's str::trim does: Unicode White_Space, but not a byte-order mark", () => {
    const line = `{"schema_version":"x","event":{"type":"turn.started"}}`
    for (const pad of [" ", "\t", "\r\n", "\n", "\u0085", "\u00a0", "\u2028", "\u3000", "\u000b"]) {
      assert.deepStrictEqual(classify(`${pad}${line}${pad}`), counted("turn.started"), JSON.stringify(pad))
    }
    assert.deepStrictEqual(classify(`\ufeff${line}`), SKIP)
    assert.deepStrictEqual(classifyLine(Uint8Array.from([0xef, 0xbb, 0xbf, ...utf8.encode(line)])), SKIP)
  })

  it.prop(
    "counts every canonically encoded event with its wire type and lifecycle kind",
    [ThreadEvent],
    ([event]) => {
      const type = event.type === "unknown" ? event.original_type : event.type
      assert.deepStrictEqual(classify(`${encodeLine(event)}\n`), counted(type))
    },
    { arbitrary: { runs: 300 } }
  )

  it.prop(
    "never throws on arbitrary text",
    [Schema.String],
    ([text]) => {
      const result = classifyLine(text)
      assert.include(["Skip", "Counted"], result._tag)
    },
    { arbitrary: { runs: 200 } }
  )

  it("counts a turn boundary whose token counts are beyond 2^53, up to u64's maximum, and skips one above it", () => {
    const completed = (tokens: string) =>
      `{"schema_version":"0.18.0","event":{"type":"turn.completed","usage":{"input_tokens":${tokens},` +
      `"cached_input_tokens":0,"cache_creation_tokens":0,"output_tokens":0}}}`
    for (const tokens of ["9007199254740993", "18446744073709551615", "1e3", "1.0"]) {
      assert.deepStrictEqual(classify(completed(tokens)), counted("turn.completed"), tokens)
    }
    for (const tokens of ["18446744073709551616", "18446744073709551617", "1.8446744073709551616e19", "-1", "0.5"]) {
      assert.deepStrictEqual(classify(completed(tokens)), SKIP, tokens)
    }
  })
})

describe("classifyAndDecodeLine", () => {
  const agreesWithTwoPasses = (line: string): void => {
    const once = classifyAndDecodeLine(utf8.encode(line))
    const cls = classifyLine(line)
    assert.deepStrictEqual(once.cls, cls, line)
    if (cls._tag === "Skip" || cls.envelope !== undefined) {
      assert.strictEqual(once.decoded, undefined, line)
      return
    }
    const twice = decodeLineText(line.trim())
    assert.isDefined(once.decoded, line)
    if (once.decoded === undefined) return
    assert.strictEqual(Result.isSuccess(once.decoded), Result.isSuccess(twice), line)
    if (Result.isSuccess(once.decoded) && Result.isSuccess(twice)) {
      assert.deepStrictEqual(once.decoded.success, twice.success, line)
    }
  }

  it("classifies like classifyLine and decodes other lines like decodeLineText, over the fixture logs", () => {
    const lines = [
      ...fixtureLines("spec-example-session.events.jsonl"),
      ...fixtureLines("vtcode-scan-malformed-lifecycle-lines.jsonl"),
      ...fixtureLines("vtcode-scan-malformed-lifecycle-lines.v1.jsonl"),
      ...fixtureLines("codex-exec-json-sample.jsonl")
    ]
    assert.isAbove(lines.length, 10)
    for (const line of lines) agreesWithTwoPasses(line)
  })

  it("agrees with decodeLineText on a number above u64's maximum and on an item that fails to decode", () => {
    const line =
      `{"schema_version":"0.18.0","event":{"type":"item.completed","item":{"id":"i","type":"agent_message",` +
      `"text":"x"},"n":18446744073709551616}}  \n`
    agreesWithTwoPasses(line)
    agreesWithTwoPasses(`{"schema_version":"0.18.0","event":{"type":"item.completed","item":{"type":"nope"}}}`)
  })
})

describe("classifyEncodedLine", () => {
  it.prop(
    "classifies every encoded event exactly as classifyLine does",
    [ThreadEvent],
    ([event]) => {
      const line = Result.try(() => encodeLine(event))
      if (Result.isFailure(line)) return
      assert.deepStrictEqual(classifyEncodedLine(line.success), classifyLine(line.success))
    },
    { arbitrary: { runs: 400 } }
  )

  it("falls back to the full classifier for escaped types, other heads and lines without an event", () => {
    const lines = [
      `{"schema_version":"0.18.0","event":{"type":"turn\\u002estarted"}}`,
      `{"schema_version":"0.18.0","event":{"type":"a\\"b"}}`,
      `{"schema_version":"0.17.0","event":{"type":"error","message":"m"}}`,
      `{"schema_version":"0.18.0"}`,
      `{"schema_version":"0.18.0","event":{"type":"turn.failed"}}`
    ]
    for (const line of lines) assert.deepStrictEqual(classifyEncodedLine(line), classifyLine(line), line)
    assert.strictEqual(classifyEncodedLine(lines[3] ?? "")._tag, "Skip")
    assert.strictEqual(classifyEncodedLine(lines[4] ?? "")._tag, "Skip")
  })
})

describe("skipReason", () => {
  it("names the field a rescan rejects, and is undefined for a counted line", () => {
    assert.strictEqual(skipReason(`{"schema_version":"0.18.0","event":{"type":"error","message":"m"}}`), undefined)
    assert.match(skipReason(`{"schema_version":"0.18.0"}`) ?? "", /^event:/)
    assert.match(skipReason(`{"schema_version":"0.18.0","event":{"type":"turn.failed","message":42}}`) ?? "", /message/)
    assert.match(skipReason(`{"schema_version":"0.18.0","event":{"type":"turn.completed"}}`) ?? "", /usage/)
  })
})

describe("exceedsJsonDepth", () => {
  it("counts array and object nesting outside strings only", () => {
    const nested = (depth: number) => "[".repeat(depth) + "]".repeat(depth)
    assert.isFalse(exceedsJsonDepth(nested(3), 3))
    assert.isTrue(exceedsJsonDepth(nested(4), 3))
    assert.isFalse(exceedsJsonDepth(`{"a":"[[[[[[[[","b":"\\"[[[[[[[["}`, 3))
    assert.isTrue(exceedsJsonDepth(`{"a":"\\\\","b":[[[[]]]]}`, 3))
    assert.isFalse(exceedsJsonDepth(nested(MAX_JSON_DEPTH)))
    assert.isTrue(exceedsJsonDepth(nested(MAX_JSON_DEPTH + 1)))
  })

  it("makes a line nested too deep undecodable to the readers while the scan still counts it", () => {
    const depth = 100_000
    const line = `{"schema_version":"0.18.0","event":{"type":"vendor.deep","x":${"[".repeat(depth)}${
      "]".repeat(depth)
    }}}`
    const { cls, decoded } = classifyAndDecodeLine(line)
    assert.strictEqual(cls._tag, "Counted")
    assert.isTrue(decoded !== undefined && Result.isFailure(decoded))
    const text = decodeLineText(line)
    assert.isTrue(Result.isFailure(text))
    if (Result.isFailure(text)) assert.match(text.failure.message, /nested deeper than 1000 levels/)
  })
})

describe("classifyEncodedLine with the expected type", () => {
  it.prop(
    "gives what classifyLine gives, whatever type the caller expects",
    [ThreadEvent, Schema.String],
    ([event, guess]) => {
      const line = Result.try(() => encodeLine(event))
      if (Result.isFailure(line)) return
      const declared = event.type === "unknown" ? event.original_type : event.type
      for (const expected of [declared, guess, `${declared}"`, `${declared}\\`]) {
        assert.deepStrictEqual(classifyEncodedLine(line.success, expected), classifyLine(line.success))
      }
    },
    { arbitrary: { runs: 200 } }
  )
})
