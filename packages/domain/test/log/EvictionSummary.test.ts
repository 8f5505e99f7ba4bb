/**
 * The default cap-eviction summary fold (docs/format.md#eviction-summary, docs/log.md#summary-hook): fact normalisation and the
 * 512-byte cut, which events contribute candidates, deduplication, the 32-fact cap, event-type
 * counting, and the persisted file shape with both eviction counts (docs/differences.md).
 */
import { assert, describe, it } from "@effect/vitest"
import { Result, Schema } from "effect"
import { decodeEvent, ThreadEvent } from "../../src/contract/ThreadEvent.ts"
import {
  addToEvictionSummary,
  emptyEvictionSummary,
  type EvictionSummaryAcc,
  evictionSummaryFile,
  factCandidates,
  isInformativeMessage,
  MAX_EVICTION_GROUNDED_FACT_BYTES,
  MAX_EVICTION_GROUNDED_FACTS,
  normalizeFact
} from "../../src/log/EvictionSummary.ts"

const utf8 = new TextEncoder()
const byteLength = (text: string): number => utf8.encode(text).length

// The oracle's whitespace: Unicode White_Space, i.e. Rust's `char::is_whitespace`.
const WS = "\\t\\n\\v\\f\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000"
const WS_RUN = new RegExp(`[${WS}]+`, "g")
const trimRust = (text: string): string => text.replace(new RegExp(`^[${WS}]+|[${WS}]+$`, "g"), "")

/** Decodes a wire-shaped event (so defaulted fields are filled exactly as on read). */
const ev = (wire: unknown): ThreadEvent => {
  const decoded = decodeEvent(wire)
  if (Result.isFailure(decoded)) return assert.fail(`test event does not decode: ${decoded.failure.message}`)
  return decoded.success
}

const completed = (item: Record<string, unknown>): ThreadEvent =>
  ev({ type: "item.completed", item: { id: "i", ...item } })
const message = (text: string): ThreadEvent => completed({ type: "agent_message", text })
const usage = { input_tokens: 1, cached_input_tokens: 0, cache_creation_tokens: 0, output_tokens: 1 }

const fold = (events: ReadonlyArray<ThreadEvent>): EvictionSummaryAcc =>
  events.reduce(addToEvictionSummary, emptyEvictionSummary)

describe("EvictionSummary", () => {
  it("exposes the spec's limits", () => {
    assert.strictEqual(MAX_EVICTION_GROUNDED_FACTS, 32)
    assert.strictEqual(MAX_EVICTION_GROUNDED_FACT_BYTES, 512)
  })

  describe("normalizeFact", () => {
    it("collapses every whitespace run to one space and trims", () => {
      assert.strictEqual(normalizeFact("  fixed \t the\n\n  build \r\n"), "fixed the build")
      assert.strictEqual(normalizeFact("a\u00a0\u3000b\u2028c\u2003d"), "a b c d")
      assert.strictEqual(normalizeFact(" \n\t "), "")
    })

    it("uses Unicode White_Space like the reference (NEL is whitespace, a BOM is not)", () => {
      // Rust's `char::is_whitespace` (White_Space) includes U+0085 and excludes U+FEFF;
      // JavaScript's `\s` does the opposite for both.
      assert.strictEqual(normalizeFact("a\u0085b"), "a b")
      assert.strictEqual(normalizeFact("\u0085a\u0085"), "a")
      assert.strictEqual(normalizeFact("a\ufeffb"), "a\ufeffb")
      assert.strictEqual(normalizeFact("\ufeffa"), "\ufeffa")
    })

    it("keeps a fact of exactly 512 bytes whole", () => {
      const fact = "x".repeat(512)
      assert.strictEqual(normalizeFact(fact), fact)
    })

    it("cuts a longer fact to 509 bytes and appends the 3-byte ellipsis", () => {
      const out = normalizeFact("y".repeat(513))
      assert.strictEqual(out, "y".repeat(509) + "…")
      assert.strictEqual(byteLength(out), 512)
    })

    it("cuts at the largest character boundary at or below 509 bytes", () => {
      // 2-, 3- and 4-byte characters: 254×2 = 508, 169×3 = 507, 127×4 = 508 bytes fit in 509.
      assert.strictEqual(normalizeFact("é".repeat(300)), "é".repeat(254) + "…")
      assert.strictEqual(normalizeFact("€".repeat(200)), "€".repeat(169) + "…")
      assert.strictEqual(normalizeFact("😀".repeat(200)), "😀".repeat(127) + "…")
      // A 3-byte character straddling byte 509 is dropped whole.
      assert.strictEqual(normalizeFact("a".repeat(508) + "€€"), "a".repeat(508) + "…")
      // One that ends exactly at byte 509 is kept.
      assert.strictEqual(normalizeFact("a".repeat(506) + "€€x"), "a".repeat(506) + "€…")
      // 512 bytes of multi-byte text is not cut at all.
      assert.strictEqual(normalizeFact("a".repeat(506) + "€€"), "a".repeat(506) + "€€")
    })

    it("measures the length after collapsing whitespace", () => {
      // 600 characters, but only 300 once the double spaces collapse.
      const spaced = "a  ".repeat(150) + "b  ".repeat(50)
      const out = normalizeFact(spaced)
      assert.strictEqual(out, ("a ".repeat(150) + "b ".repeat(50)).trim())
      assert.isFalse(out.endsWith("…"))
    })

    it.prop(
      "always yields a trimmed, idempotent fact of at most 512 bytes",
      [Schema.String],
      ([raw]) => {
        const out = normalizeFact(raw)
        assert.isAtMost(byteLength(out), MAX_EVICTION_GROUNDED_FACT_BYTES)
        assert.strictEqual(out, trimRust(out))
        assert.strictEqual(normalizeFact(out), out)
      }
    )

    it.prop(
      "a cut fact is the longest character prefix that fits in 509 bytes, plus the ellipsis",
      [Schema.String.check(Schema.isMinLength(1))],
      ([unit]) => {
        // Repeat the generated text until it is certainly over the limit.
        const raw = `${unit}z`.repeat(Math.ceil(600 / byteLength(`${unit}z`)))
        const collapsed = trimRust(raw.replace(WS_RUN, " "))
        const out = normalizeFact(raw)
        if (byteLength(collapsed) <= MAX_EVICTION_GROUNDED_FACT_BYTES) {
          assert.strictEqual(out, collapsed)
          return
        }
        assert.isTrue(out.endsWith("…"))
        const kept = out.slice(0, -1)
        assert.isTrue(collapsed.startsWith(kept))
        assert.isAtMost(byteLength(kept), 509)
        const next = [...collapsed.slice(kept.length)][0] ?? ""
        assert.isAbove(byteLength(kept + next), 509)
      }
    )
  })

  describe("factCandidates", () => {
    it("takes the text of completed agent messages and plans", () => {
      assert.deepStrictEqual(factCandidates(message("build is done")), ["build is done"])
      assert.deepStrictEqual(factCandidates(completed({ type: "plan", text: "1. build" })), ["1. build"])
    })

    it("skips agent messages that carry no information, and only those", () => {
      for (const text of ["No response requested.", "  (no content) ", "Done.", "4", "OK!", "", " \n ", "...", "🙂"]) {
        assert.deepStrictEqual(factCandidates(message(text)), [], JSON.stringify(text))
        assert.isFalse(isInformativeMessage(text), JSON.stringify(text))
      }
      for (const text of ["Tests pass.", "No response requested for now.", "supercalifragilistic!", "x".repeat(20)]) {
        assert.deepStrictEqual(factCandidates(message(text)), [text], text)
      }
      // Plans, harness messages and failures keep their short texts.
      assert.deepStrictEqual(factCandidates(completed({ type: "plan", text: "Done." })), ["Done."])
      assert.deepStrictEqual(factCandidates(ev({ type: "error", message: "4" })), ["4"])
    })

    it("turns each file change into `file <kind>: <path>`", () => {
      const change = completed({
        type: "file_change",
        changes: [{ path: "a.ts", kind: "add" }, { path: "b.ts", kind: "delete" }, { path: "c.ts", kind: "update" }],
        status: "completed"
      })
      assert.deepStrictEqual(factCandidates(change), ["file add: a.ts", "file delete: b.ts", "file update: c.ts"])
    })

    it("takes a harness item's message only when it has one", () => {
      assert.deepStrictEqual(
        factCandidates(completed({ type: "harness", event: "verification_failed", message: "tests red" })),
        ["tests red"]
      )
      assert.deepStrictEqual(factCandidates(completed({ type: "harness", event: "verification_started" })), [])
    })

    it("takes the message of turn.failed, turn.blocked and error events", () => {
      assert.deepStrictEqual(factCandidates(ev({ type: "turn.failed", message: "boom" })), ["boom"])
      assert.deepStrictEqual(factCandidates(ev({ type: "turn.blocked", message: "fuse" })), ["fuse"])
      assert.deepStrictEqual(factCandidates(ev({ type: "error", message: "fatal" })), ["fatal"])
    })

    it("ignores streaming updates, tool output and every other event", () => {
      const silent: ReadonlyArray<ThreadEvent> = [
        ev({ type: "item.updated", item: { id: "i", type: "agent_message", text: "partial" } }),
        ev({ type: "item.started", item: { id: "i", type: "agent_message", text: "partial" } }),
        completed({ type: "reasoning", text: "thinking" }),
        completed({ type: "command_execution", command: "ls", aggregated_output: "a\nb", status: "completed" }),
        completed({ type: "tool_output", call_id: "c", output: "big output", status: "completed" }),
        completed({ type: "error", message: "item-level error" }),
        ev({ type: "turn.started" }),
        ev({ type: "turn.completed", usage }),
        ev({ type: "thread.started", thread_id: "t" }),
        ev({
          type: "matrix.updated",
          spec: { id: "m1", tasks: [], resources: {} },
          lifecycle: "running",
          tasks: [],
          generation: null,
          revision: 1
        }),
        ev({ type: "some.future.event", text: "not a fact" })
      ]
      for (const event of silent) assert.deepStrictEqual(factCandidates(event), [], event.type)
    })
  })

  describe("addToEvictionSummary", () => {
    it("counts every decoded event per type, facts or not", () => {
      const acc = fold([
        ev({ type: "turn.started" }),
        message("step one"),
        message("step two"),
        ev({ type: "turn.completed", usage }),
        ev({ type: "some.future.event" })
      ])
      assert.strictEqual(acc.decodedEvents, 5)
      assert.deepStrictEqual(
        [...acc.eventTypes],
        [["turn.started", 1], ["item.completed", 2], ["turn.completed", 1], ["unknown", 1]]
      )
      assert.deepStrictEqual(acc.facts, ["step one", "step two"])
    })

    it("normalises candidates and drops empty ones and exact duplicates of earlier facts", () => {
      const acc = fold([
        message("  same   fact "),
        message("same fact"),
        message("   "),
        ev({ type: "error", message: "same\tfact" }),
        message("Same fact"),
        message("x".repeat(600)),
        message("x".repeat(700))
      ])
      assert.deepStrictEqual(acc.facts, ["same fact", "Same fact", "x".repeat(509) + "…"])
      assert.strictEqual(acc.decodedEvents, 7)
    })

    it("keeps the first 32 distinct facts in order and keeps counting events after that", () => {
      const events = Array.from({ length: 40 }, (_, i) => message(`fact ${i}`))
      const acc = fold(events)
      assert.deepStrictEqual(acc.facts, Array.from({ length: 32 }, (_, i) => `fact ${i}`))
      assert.strictEqual(acc.decodedEvents, 40)
    })

    it("stops inside one event's candidates when the cap is reached", () => {
      const first = Array.from({ length: 30 }, (_, i) => message(`fact ${i}`))
      const change = completed({
        type: "file_change",
        changes: ["a", "b", "c", "d"].map((p) => ({ path: p, kind: "update" })),
        status: "completed"
      })
      const acc = fold([...first, change])
      assert.deepStrictEqual(acc.facts.slice(30), ["file update: a", "file update: b"])
      assert.strictEqual(acc.facts.length, 32)
    })

    it("does not mutate the accumulator it was given", () => {
      const before = fold([message("fact a")])
      const types = [...before.eventTypes]
      addToEvictionSummary(before, message("fact b"))
      assert.deepStrictEqual(before.facts, ["fact a"])
      assert.deepStrictEqual([...before.eventTypes], types)
      assert.strictEqual(before.decodedEvents, 1)
    })

    it.prop(
      "bounds facts for any event sequence: at most 32, each at most 512 bytes, distinct and non-empty",
      { events: Schema.Array(ThreadEvent) },
      ({ events }) => {
        const acc = fold(events)
        assert.strictEqual(acc.decodedEvents, events.length)
        assert.strictEqual([...acc.eventTypes.values()].reduce((a, b) => a + b, 0), events.length)
        assert.isAtMost(acc.facts.length, MAX_EVICTION_GROUNDED_FACTS)
        assert.strictEqual(new Set(acc.facts).size, acc.facts.length)
        for (const fact of acc.facts) {
          assert.isAbove(fact.length, 0)
          assert.isAtMost(byteLength(fact), MAX_EVICTION_GROUNDED_FACT_BYTES)
        }
      },
      { arbitrary: { runs: 50, seed: 42 } }
    )
  })

  describe("evictionSummaryFile", () => {
    it("writes the wire keys in order with event types sorted and both eviction counts", () => {
      const acc = fold([
        ev({ type: "turn.started" }),
        message("hello there"),
        ev({ type: "turn.completed", usage }),
        ev({ type: "error", message: "bad" })
      ])
      const file = evictionSummaryFile(acc, {
        sessionId: "raw/id",
        createdAt: "2026-01-01T00:00:00.000000000+00:00",
        countedLines: 6,
        firstTurn: 3,
        lastTurn: 4
      })
      assert.strictEqual(
        JSON.stringify(file),
        `{"session_id":"raw/id","evicted_event_count":4,` +
          `"event_types":{"error":1,"item.completed":1,"turn.completed":1,"turn.started":1},` +
          `"grounded_facts":["hello there","bad"],"created_at":"2026-01-01T00:00:00.000000000+00:00",` +
          `"evicted_line_count":6,"first_turn":3,"last_turn":4}`
      )
    })

    it("describes an empty eviction with empty types and facts", () => {
      const file = evictionSummaryFile(emptyEvictionSummary, {
        sessionId: "s",
        createdAt: "t",
        countedLines: 2,
        firstTurn: 1,
        lastTurn: 1
      })
      assert.strictEqual(file.evicted_event_count, 0)
      assert.deepStrictEqual(file.event_types, {})
      assert.deepStrictEqual(file.grounded_facts, [])
      assert.strictEqual(file.evicted_line_count, 2)
    })
  })
})
