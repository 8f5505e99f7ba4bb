/**
 * The fast decoders of the search build and the classifier: whenever one returns an event, the
 * Schema decodes the same value to an equal one — for arbitrary events of the contract, and for
 * the same events with a field replaced by a value of another kind or removed.
 */
import { assert, describe, it } from "@effect/vitest"
import { Result, Schema } from "effect"
import { encodeLine } from "../../src/contract/Encode.ts"
import { decodeLifecycleFast, decodeTextEventFast } from "../../src/contract/FastDecode.ts"
import { decodeEnvelope, ThreadEvent } from "../../src/contract/ThreadEvent.ts"

// Values a mutation puts in place of a field (`undefined`: the key is removed).
const REPLACEMENTS: ReadonlyArray<unknown> = [
  undefined,
  null,
  0,
  -0,
  -1,
  1.5,
  2 ** 31,
  2 ** 53,
  2 ** 64,
  "",
  "x",
  "completed",
  true,
  [],
  ["a"],
  {},
  Number.POSITIVE_INFINITY
]

type Slot = { readonly parent: Record<string, unknown> | Array<unknown>; readonly key: string | number }

const slotsOf = (value: unknown, out: Array<Slot> = []): Array<Slot> => {
  if (Array.isArray(value)) {
    value.forEach((v, i) => {
      out.push({ parent: value, key: i })
      slotsOf(v, out)
    })
  } else if (typeof value === "object" && value !== null) {
    const record = value as Record<string, unknown>
    for (const key of Object.keys(record)) {
      out.push({ parent: record, key })
      slotsOf(record[key], out)
    }
  }
  return out
}

const mutate = (value: unknown, edits: ReadonlyArray<readonly [number, number]>): unknown => {
  for (const [at, choice] of edits) {
    const slots = slotsOf(value)
    const slot = slots[at % Math.max(1, slots.length)]
    if (slot === undefined) continue
    // A fresh copy each time: a shared array or object could otherwise end up inside itself.
    const replacement = structuredClone(REPLACEMENTS[choice % REPLACEMENTS.length])
    if (Array.isArray(slot.parent)) slot.parent[Number(slot.key)] = replacement ?? null
    else if (replacement === undefined) delete slot.parent[slot.key]
    else slot.parent[slot.key] = replacement
  }
  return value
}

const assertAgrees = (value: unknown): void => {
  const full = decodeEnvelope(value)
  const text = decodeTextEventFast(value)
  if (text !== undefined) {
    if (Result.isFailure(full)) {
      assert.fail(`fast text decode accepted what the Schema rejects: ${full.failure.message}`)
    }
    assert.deepStrictEqual(text, full.success.event)
  }
  const lifecycle = decodeLifecycleFast(value)
  if (lifecycle !== undefined) {
    if (Result.isFailure(full)) {
      assert.fail(`fast lifecycle decode accepted what the Schema rejects: ${full.failure.message}`)
    }
    assert.deepStrictEqual(lifecycle, full.success)
  }
}

const Edits = Schema.Array(
  Schema.Tuple([
    Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 60 })),
    Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 40 }))
  ])
).check(Schema.isMaxLength(3))

describe("FastDecode", () => {
  it.prop(
    "an arbitrary event, with fields replaced or removed, decodes fast only to what the Schema decodes",
    [ThreadEvent, Edits],
    ([event, edits]) => assertAgrees(mutate(JSON.parse(encodeLine(event)), edits)),
    { arbitrary: { runs: 1500 } }
  )

  ThreadEvent.members.forEach((member, i) => {
    it.prop(
      `${ThreadEvent.discriminants[i]} events with fields replaced decode fast only as the Schema does`,
      [member, Edits],
      ([event, edits]) => assertAgrees(mutate(JSON.parse(encodeLine(event)), edits)),
      { arbitrary: { runs: 60 } }
    )
  })

  it("decodes the lines a session is mostly made of without the Schema", () => {
    const context = { task_id: "t", turn_id: "u", actor_id: "a", timestamp: "2025-01-01T00:00:00Z" }
    const lines: ReadonlyArray<ThreadEvent> = [
      { type: "item.completed", item: { id: "m", type: "agent_message", text: "done" } },
      { type: "item.completed", item: { context, id: "p", type: "plan", text: "1. fix" } },
      {
        type: "item.completed",
        item: {
          id: "c",
          type: "command_execution",
          command: "npm test",
          aggregated_output: "x",
          exit_code: 1,
          status: "failed"
        }
      },
      {
        type: "item.completed",
        item: { id: "f", type: "file_change", changes: [{ path: "src/a.ts", kind: "update" }], status: "completed" }
      },
      {
        type: "item.completed",
        item: { id: "d", type: "decision", summary: "s", rationale: "r", alternatives: ["b"], evidence_ids: [] }
      },
      { type: "error", message: "boom" }
    ]
    for (const event of lines) {
      const value: unknown = JSON.parse(encodeLine(event))
      assert.deepStrictEqual(decodeTextEventFast(value), event)
      assertAgrees(value)
    }
    const started: ThreadEvent = { type: "turn.started", context: { ...context, origin: "user", goal: "fix it" } }
    const completed: ThreadEvent = {
      type: "turn.completed",
      usage: { input_tokens: 1, cached_input_tokens: 0, cache_creation_tokens: 0, output_tokens: 2 }
    }
    for (const event of [started, completed]) {
      assert.deepStrictEqual(decodeLifecycleFast(JSON.parse(encodeLine(event))), { schema_version: "0.18.0", event })
    }
  })

  it("leaves to the Schema what it is unsure of: 2^64 counts, Infinity arguments, unknown item types", () => {
    const unsure: ReadonlyArray<unknown> = [
      { schema_version: "1", event: { type: "turn.completed", usage: { input_tokens: 2 ** 64 } } },
      {
        schema_version: "1",
        event: {
          type: "item.completed",
          item: { id: "c", type: "command_execution", command: "ls", status: "failed", arguments: [Infinity] }
        }
      },
      { schema_version: "1", event: { type: "item.completed", item: { id: "r", type: "reasoning", text: "t" } } },
      { schema_version: "1", event: { type: "item.completed", item: [] } }
    ]
    for (const value of unsure) {
      assert.isUndefined(decodeTextEventFast(value))
      assert.isUndefined(decodeLifecycleFast(value))
    }
  })
})
