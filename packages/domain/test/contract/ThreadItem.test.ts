import { assert, describe, it } from "@effect/vitest"
import { Result, Schema } from "effect"
import { encodeItem } from "../../src/contract/Encode.ts"
import { type McpToolCallItem, THREAD_ITEM_TYPES, ThreadItem } from "../../src/contract/ThreadItem.ts"

const decodeItem = Schema.decodeUnknownResult(ThreadItem)
const schemaBytes = (item: ThreadItem): string => JSON.stringify(Schema.encodeSync(ThreadItem)(item))

const decodeOk = (value: unknown): ThreadItem => {
  const result = decodeItem(value)
  if (Result.isFailure(result)) assert.fail(result.failure.message)
  return result.success
}

/** Decodes the JSON text of an item and re-encodes it with the fast encoder. */
const reencode = (text: string): string => encodeItem(decodeOk(JSON.parse(text)))

describe("ThreadItem", () => {
  ThreadItem.members.forEach((member, i) => {
    const type = ThreadItem.discriminants[i]
    it.prop(
      `${type} items encode canonically and round-trip to identical bytes`,
      [member],
      ([item]) => {
        const bytes = encodeItem(item)
        assert.strictEqual(bytes, schemaBytes(item))
        assert.strictEqual(reencode(bytes), bytes)
      },
      { arbitrary: { runs: 60 } }
    )
  })

  it("lists every item type of the contract", () => {
    assert.deepStrictEqual(THREAD_ITEM_TYPES, [
      "agent_message",
      "plan",
      "reasoning",
      "decision",
      "command_execution",
      "tool_invocation",
      "tool_output",
      "file_change",
      "mcp_tool_call",
      "web_search",
      "harness",
      "error"
    ])
  })

  it("writes context first, then id and type, then the item fields", () => {
    const text =
      `{"context":{"task_id":"task-a","turn_id":"turn-1","actor_id":"root","timestamp":"2026-10-03T09:00:09Z",`
      + `"activity":"verification"},"id":"cmd-1","type":"command_execution","command":"npm test",`
      + `"aggregated_output":"1 failing","exit_code":1,"status":"failed"}`
    assert.strictEqual(reencode(text), text)
    const shuffled = `{"status":"failed","exit_code":1,"type":"command_execution","command":"npm test",`
      + `"aggregated_output":"1 failing","id":"cmd-1","context":{"activity":"verification",`
      + `"timestamp":"2026-10-03T09:00:09Z","actor_id":"root","turn_id":"turn-1","task_id":"task-a"}}`
    assert.strictEqual(reencode(shuffled), text)
  })

  it("rejects an unknown item type with a message naming the known types", () => {
    const result = decodeItem({ id: "x", type: "hologram" })
    assert.isTrue(Result.isFailure(result))
    if (Result.isFailure(result)) {
      assert.include(result.failure.message, "agent_message")
      assert.include(result.failure.message, "harness")
    }
  })

  it("reports a bad field of a known item type at its path", () => {
    const result = decodeItem({
      id: "x",
      type: "file_change",
      changes: [{ path: "a", kind: "rename" }],
      status: "completed"
    })
    assert.isTrue(Result.isFailure(result))
    if (Result.isFailure(result)) assert.include(result.failure.message, `["changes"][0]["kind"]`)
  })

  it("decodes defaulted fields to their defaults and always writes them", () => {
    assert.strictEqual(
      reencode(`{"id":"c","type":"command_execution","command":"ls","status":"completed"}`),
      `{"id":"c","type":"command_execution","command":"ls","aggregated_output":"","status":"completed"}`
    )
    assert.strictEqual(
      reencode(`{"id":"o","type":"tool_output","call_id":"t","status":"in_progress"}`),
      `{"id":"o","type":"tool_output","call_id":"t","output":"","status":"in_progress"}`
    )
    assert.strictEqual(
      reencode(`{"id":"d","type":"decision","summary":"s","rationale":"r"}`),
      `{"id":"d","type":"decision","summary":"s","rationale":"r","alternatives":[],"evidence_ids":[]}`
    )
  })

  it("fails a defaulted field that is present but null", () => {
    assert.isTrue(
      Result.isFailure(
        decodeItem({ id: "c", type: "command_execution", command: "ls", aggregated_output: null, status: "completed" })
      )
    )
  })

  it("reads null optional fields as absent and never writes a null payload", () => {
    assert.strictEqual(
      reencode(
        `{"context":null,"id":"t","type":"tool_invocation","tool_name":"read","arguments":null,"tool_call_id":null,`
          + `"status":"completed","outcome":null}`
      ),
      `{"id":"t","type":"tool_invocation","tool_name":"read","status":"completed"}`
    )
    const item: McpToolCallItem = { id: "m", type: "mcp_tool_call", tool_name: "q", arguments: null }
    assert.strictEqual(encodeItem(item), `{"id":"m","type":"mcp_tool_call","tool_name":"q"}`)
    assert.strictEqual(schemaBytes(item), `{"id":"m","type":"mcp_tool_call","tool_name":"q"}`)
  })

  it("keeps opaque arguments as JSON, nested key order included", () => {
    const text =
      `{"id":"t","type":"tool_invocation","tool_name":"exec","arguments":{"z":[1,{"b":null,"a":"x"}],"a":true},`
      + `"status":"failed","outcome":"permission_rejected"}`
    assert.strictEqual(reencode(text), text)
  })

  it("rejects out-of-range integers and unknown strict enum values", () => {
    assert.isTrue(
      Result.isFailure(
        decodeItem({ id: "c", type: "command_execution", command: "x", exit_code: 2 ** 31, status: "completed" })
      )
    )
    assert.isTrue(
      Result.isFailure(
        decodeItem({ id: "c", type: "command_execution", command: "x", exit_code: 1.5, status: "completed" })
      )
    )
    assert.isTrue(Result.isFailure(decodeItem({ id: "h", type: "harness", event: "something_new" })))
    assert.isTrue(
      Result.isFailure(decodeItem({ id: "f", type: "file_change", changes: [], status: "completed", additions: -1 }))
    )
  })
})
