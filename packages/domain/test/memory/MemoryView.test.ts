/**
 * The session memory view (docs/search.md#memory-view): the write plan (raw id, schema 3,
 * preserved `created_at`, nothing to do on a content-equivalent view), canonical encoding round
 * trip, lenient fact reading (entries without text keep their index), and the derivation fold.
 */
import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import { decodeEvent, type ThreadEvent } from "../../src/contract/ThreadEvent.ts"
import {
  addToMemoryDerivation,
  decodeMemoryViewText,
  derivedMemoryView,
  emptyMemoryDerivation,
  encodeMemoryView,
  planMemoryViewWrite,
  readMemoryFactsText,
  type SessionMemoryView
} from "../../src/memory/MemoryView.ts"

const view = (facts: ReadonlyArray<string>): SessionMemoryView => ({
  summary: "did a thing",
  task_summary: null,
  spec_summary: null,
  evaluation_summary: null,
  touched_files: ["src/a.ts"],
  grounded_facts: facts.map((fact) => ({ fact, source: "host" })),
  history_artifact_path: null,
  generated_at: "2026-01-01T00:00:00Z"
})

const ev = (wire: unknown): ThreadEvent => {
  const decoded = decodeEvent(wire)
  if (Result.isFailure(decoded)) return assert.fail(decoded.failure.message)
  return decoded.success
}

describe("MemoryView", () => {
  it("plans a first write with the raw id, schema 3 and both timestamps at now", () => {
    const plan = planMemoryViewWrite(undefined, view(["a"]), "raw/id", 100)
    assert.strictEqual(plan.view?.session_id, "raw/id")
    assert.strictEqual(plan.view?.schema_version, 3)
    assert.strictEqual(plan.view?.created_at, 100)
    assert.strictEqual(plan.view?.updated_at, 100)
  })

  it("keeps created_at, and writes nothing when only volatile fields differ", () => {
    const first = planMemoryViewWrite(undefined, view(["a"]), "s", 100).view
    assert.isDefined(first)
    if (first === undefined) return
    const same = planMemoryViewWrite(first, { ...view(["a"]), generated_at: "2027-01-01T00:00:00Z" }, "s", 200)
    assert.isUndefined(same.view)
    const changed = planMemoryViewWrite(first, view(["a", "b"]), "s", 200).view
    assert.strictEqual(changed?.created_at, 100)
    assert.strictEqual(changed?.updated_at, 200)
  })

  it("round-trips through its canonical encoding", () => {
    const planned = planMemoryViewWrite(undefined, view(["x"]), "s", 5).view
    if (planned === undefined) return assert.fail("nothing planned")
    const text = encodeMemoryView(planned)
    const decoded = decodeMemoryViewText(text)
    assert.isTrue(Result.isSuccess(decoded))
    if (Result.isSuccess(decoded)) assert.strictEqual(encodeMemoryView(decoded.success), text)
    assert.isTrue(text.indexOf("\"session_id\"") < text.indexOf("\"summary\""))
  })

  it("rejects a view missing a required field, naming it", () => {
    const decoded = decodeMemoryViewText(JSON.stringify({ summary: "x", grounded_facts: [] }))
    assert.isTrue(Result.isFailure(decoded))
    if (Result.isFailure(decoded)) {
      assert.match(decoded.failure.message, /task_summary|touched_files|history_artifact_path/)
    }
  })

  it("reads facts leniently: an entry without text keeps its index, created_at falls back to updated_at", () => {
    const read = readMemoryFactsText(JSON.stringify({
      grounded_facts: [{ fact: "a" }, { source: "x" }, 7, { fact: "c" }],
      updated_at: 42
    }))
    if (Result.isFailure(read)) return assert.fail(read.failure.message)
    assert.deepStrictEqual(read.success.facts, ["a", undefined, undefined, "c"])
    assert.strictEqual(read.success.createdAt, 42)
    assert.isFalse(read.success.derived)
    assert.isTrue(Result.isFailure(readMemoryFactsText("{not json")))
    assert.isTrue(Result.isFailure(readMemoryFactsText("{\"summary\":\"no facts\"}")))
  })

  it("derives goals, messages, decisions, file changes, failures and verification with their sources", () => {
    const events: Array<[ThreadEvent, number, number | undefined]> = [
      [
        ev({
          type: "turn.started",
          context: {
            task_id: "t",
            turn_id: "1",
            actor_id: "a",
            origin: "user",
            timestamp: "2026-01-01T00:00:00Z",
            goal: "Fix the flaky login test"
          }
        }),
        0,
        1
      ],
      [
        ev({ type: "item.completed", item: { id: "1", type: "agent_message", text: "Looking at  login.test.ts" } }),
        10,
        1
      ],
      [
        ev({
          type: "item.completed",
          item: { id: "2", type: "command_execution", command: "npm test", status: "failed", exit_code: 1 }
        }),
        20,
        1
      ],
      [
        ev({
          type: "item.completed",
          item: { id: "3", type: "decision", summary: "Mock the clock", rationale: "timers are flaky" }
        }),
        30,
        1
      ],
      [
        ev({
          type: "item.completed",
          item: {
            id: "4",
            type: "file_change",
            changes: [{ path: "src/login.ts", kind: "update" }],
            status: "completed"
          }
        }),
        40,
        1
      ],
      [ev({ type: "item.completed", item: { id: "5", type: "harness", event: "verification_passed" } }), 50, 1],
      [
        ev({ type: "item.completed", item: { id: "6", type: "agent_message", text: "Looking at login.test.ts" } }),
        60,
        1
      ],
      [ev({ type: "turn.failed", message: "rate limited" }), 70, 1]
    ]
    const acc = events.reduce(
      (a, [e, offset, turn]) => addToMemoryDerivation(a, e, offset, turn),
      emptyMemoryDerivation
    )
    const derived = derivedMemoryView(acc, { sessionId: "s", createdAt: 7, nowMs: 9_000 })
    assert.deepStrictEqual(derived.grounded_facts.map((f) => f.fact), [
      "goal: Fix the flaky login test",
      "Looking at login.test.ts",
      "command failed (exit 1): npm test",
      "decision: Mock the clock — timers are flaky",
      "file update: src/login.ts",
      "verification passed",
      "rate limited"
    ])
    assert.strictEqual(derived.grounded_facts[2]?.source, "turn 1, events.jsonl@20")
    assert.strictEqual(derived.objective, "Fix the flaky login test")
    assert.deepStrictEqual(derived.touched_files, ["src/login.ts"])
    assert.strictEqual(derived.verification_summary, "verification passed")
    assert.strictEqual(derived.origin, "derived")
    assert.strictEqual(derived.created_at, 7)
    assert.match(derived.summary, /8 events in 1 turn, 1 failure/)
  })

  it("skips agent messages without information but keeps the last one as the task summary", () => {
    const message = (text: string): ThreadEvent =>
      ev({ type: "item.completed", item: { id: "m", type: "agent_message", text } })
    const acc = ["No response requested.", "Fixed the login test", "  ", "Done."].reduce(
      (a, text, i) => addToMemoryDerivation(a, message(text), i * 10, 1),
      emptyMemoryDerivation
    )
    const derived = derivedMemoryView(acc, { sessionId: "s", createdAt: 7, nowMs: 9_000 })
    assert.deepStrictEqual(derived.grounded_facts, [{
      fact: "Fixed the login test",
      source: "turn 1, events.jsonl@10"
    }])
    assert.strictEqual(derived.task_summary, "Done.")
  })

  it("holds redacted text: facts, summaries and the task summary of a derived view", () => {
    const message = (text: string): ThreadEvent =>
      ev({ type: "item.completed", item: { id: "m", type: "agent_message", text } })
    const acc = ["Deployed with PGPASSWORD=pgpw0001 set", "Rotated sk_live_51Hderivedsecret0002 today"].reduce(
      (a, text, i) => addToMemoryDerivation(a, message(text), i * 10, 1),
      emptyMemoryDerivation
    )
    const text = JSON.stringify(derivedMemoryView(acc, { sessionId: "s", createdAt: 7, nowMs: 9_000 }))
    assert.notInclude(text, "pgpw0001")
    assert.notInclude(text, "51Hderivedsecret0002")
    assert.include(text, "PGPASSWORD=[REDACTED] set")
  })
})
