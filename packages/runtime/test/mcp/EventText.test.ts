/**
 * How `read_turn` renders one event: compact texts per kind, without the item and turn context
 * that repeats on every line, for every event the contract allows.
 */
import { assert, describe, it } from "@effect/vitest"
import { encodeEventForDisplay, ThreadEvent } from "@logbook/domain"
import { renderEvent } from "../../src/mcp/EventText.ts"

const context = {
  task_id: "claude-34b1e2a4-8cec-4bb9-94a0-ec9e9c639c8e",
  turn_id: "turn-1",
  actor_id: "claude-34b1e2a4-8cec-4bb9-94a0-ec9e9c639c8e",
  timestamp: "2026-02-05T11:31:54.307Z"
}

const item = (fields: Record<string, unknown>) => renderEvent({ type: "item.completed", item: { context, ...fields } })

describe("EventText", () => {
  it("a tool call names its tool, subject and status, and repeats arguments only when they say more", () => {
    assert.deepStrictEqual(
      item({
        id: "item-3",
        type: "tool_invocation",
        tool_name: "Read",
        arguments: { file_path: "src/a.ts" },
        status: "completed",
        outcome: "success"
      }),
      { type: "item.completed tool_invocation", text: "Read src/a.ts (completed, success)" }
    )
    assert.strictEqual(
      item({
        id: "item-5",
        type: "tool_invocation",
        tool_name: "Edit",
        arguments: { file_path: "src/a.ts", old_string: "a", new_string: "b" },
        status: "in_progress"
      }).text,
      `Edit src/a.ts (in_progress)\n{"file_path":"src/a.ts","old_string":"a","new_string":"b"}`
    )
    assert.strictEqual(
      item({ id: "m", type: "mcp_tool_call", tool_name: "fetch", arguments: { url: "https://x.test" }, result: "ok" })
        .text,
      "mcp fetch https://x.test\nok"
    )
  })

  it("a tool's output says which call it answers, its exit code, and its text cut to a tail", () => {
    const out = item({
      id: "item-4",
      type: "tool_output",
      call_id: "item-3",
      output: "x".repeat(5000),
      status: "failed",
      exit_code: 2
    })
    assert.isTrue(out.text.startsWith("output of item-3 (failed, exit 2)\nxxx"))
    assert.isBelow(out.text.length, 900)
    assert.include(out.text, "more characters]")
  })

  it("a turn's start gives its origin and goal, its end the token usage, without the context ids", () => {
    assert.deepStrictEqual(
      renderEvent({
        type: "turn.started",
        context: { ...context, origin: "user", goal: "Make settings parsing strict" }
      }),
      { type: "turn.started", text: "turn started by user: Make settings parsing strict" }
    )
    assert.strictEqual(renderEvent({ type: "turn.started" }).text, "turn started")
    assert.strictEqual(
      renderEvent({
        type: "turn.completed",
        usage: { input_tokens: 1200, cached_input_tokens: 800, cache_creation_tokens: 0, output_tokens: 300 }
      }).text,
      "turn completed; tokens: input 1200 (cached 800), output 300"
    )
    assert.strictEqual(renderEvent({ type: "turn.failed", message: "rate limited" }).text, "turn failed: rate limited")
  })

  it("commands keep their exit code, status and output; edits their paths and diff", () => {
    assert.strictEqual(
      item({
        id: "c",
        type: "command_execution",
        command: "npm test",
        aggregated_output: "1 failed",
        exit_code: 1,
        status: "failed"
      })
        .text,
      "$ npm test (exit 1, failed)\n1 failed"
    )
    assert.strictEqual(
      item({
        id: "f",
        type: "file_change",
        changes: [{ path: "a.ts", kind: "update" }],
        status: "completed",
        unified_diff: "-a\n+b"
      })
        .text,
      "update a.ts\n-a\n+b"
    )
  })

  it.prop(
    "every event the contract allows renders with its type, a bounded text and no context object",
    [ThreadEvent],
    ([event]) => {
      const shown = renderEvent(JSON.parse(encodeEventForDisplay(event)))
      // An event of a type the contract does not define shows the type its writer gave it.
      const expected = "item" in event
        ? `${event.type} ${event.item.type}`
        : event.type === "unknown"
        ? event.original_type
        : event.type
      assert.strictEqual(shown.type, expected)
      assert.isAtMost(shown.text.length, 3000)
      assert.notInclude(shown.text, `"context":{"task_id"`)
    },
    { arbitrary: { runs: 400 } }
  )
})
