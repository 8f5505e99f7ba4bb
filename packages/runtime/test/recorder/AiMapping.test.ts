import { assert, describe, it } from "@effect/vitest"
import { Schema } from "effect"
import type { Response } from "effect/ai"
import { Prompt, Response as R } from "effect/ai"
import { classifyPrompt, endsTurn, initialMapper, mapParts, promptGoal, usageOf } from "../../src/recorder/AiMapping.ts"

const Chunk = Schema.Struct({ reasoning: Schema.Boolean, text: Schema.String, cut: Schema.Int })

const usage = (input: number, output: number) =>
  new R.Usage({
    inputTokens: { uncached: undefined, total: input, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: output, text: undefined, reasoning: undefined }
  })

describe("AiMapping", () => {
  it.prop(
    "streamed text and reasoning, split anywhere, map to the same items as the whole parts",
    { chunks: Schema.Array(Chunk) },
    ({ chunks }) => {
      const whole: Array<Response.AnyPart> = chunks.map((c) =>
        R.makePart(c.reasoning ? "reasoning" : "text", { text: c.text })
      )
      const streamed: Array<Response.AnyPart> = chunks.flatMap((c, i): Array<Response.AnyPart> => {
        const id = `p${i}`
        const at = Math.abs(c.cut) % (c.text.length + 1)
        return c.reasoning
          ? [
            R.makePart("reasoning-start", { id }),
            R.makePart("reasoning-delta", { id, delta: c.text.slice(0, at) }),
            R.makePart("reasoning-delta", { id, delta: c.text.slice(at) }),
            R.makePart("reasoning-end", { id })
          ]
          : [
            R.makePart("text-start", { id }),
            R.makePart("text-delta", { id, delta: c.text.slice(0, at) }),
            R.makePart("text-delta", { id, delta: c.text.slice(at) }),
            R.makePart("text-end", { id })
          ]
      })
      const a = mapParts(initialMapper("t1", 1), whole, {})
      const b = mapParts(initialMapper("t1", 1), streamed, {})
      assert.deepStrictEqual(b.items, a.items)
      assert.strictEqual(a.items.length, chunks.filter((c) => c.text.length > 0).length)
    }
  )

  it("a tool call opens an in-progress invocation that its result completes, linked by call id", () => {
    const parts: Array<Response.AnyPart> = [
      R.makePart("tool-call", { id: "k1", name: "shell", params: { command: "ls" }, providerExecuted: false }),
      R.makePart("tool-result", {
        id: "k1",
        name: "shell",
        isFailure: false,
        result: { exitCode: 2, output: "no such file" },
        encodedResult: { exitCode: 2, output: "no such file" },
        providerExecuted: false,
        preliminary: false
      }),
      R.makePart("finish", { reason: "tool-calls", usage: usage(7, 3) })
    ]
    const { items, state } = mapParts(initialMapper("t4", 2), parts, { shell: { kind: "command" } })
    assert.deepStrictEqual(items.map((item) => `${item.type}:${item.id}`), [
      "tool_invocation:t4-tool-k1",
      "tool_invocation:t4-tool-k1",
      "tool_output:t4-out-k1",
      "command_execution:t4-cmd-k1"
    ])
    const command = items[3]
    assert.deepStrictEqual(
      command?.type === "command_execution" ? [command.command, command.exit_code, command.status] : [],
      ["ls", 2, "failed"]
    )
    const output = items[2]
    assert.strictEqual(output?.type === "tool_output" ? output.call_id : "", "t4-tool-k1")
    assert.deepStrictEqual(state.usage, {
      input_tokens: 7,
      cached_input_tokens: 0,
      cache_creation_tokens: 0,
      output_tokens: 3
    })
    assert.isFalse(endsTurn(state), "a response with tool calls leaves its turn open for the next round")
    assert.deepStrictEqual(usageOf(usage(1, 2)).output_tokens, 2)
  })

  it("a prompt ending with a user message opens a turn; one ending with tool results is a follow-up", () => {
    const user = Prompt.make("fix the cache")
    assert.strictEqual(classifyPrompt(user), "user")
    assert.strictEqual(promptGoal(user), "fix the cache")
    const followUp = Prompt.concat(
      user,
      Prompt.fromResponseParts([
        R.makePart("tool-call", { id: "k", name: "shell", params: {}, providerExecuted: false }),
        R.makePart("tool-result", {
          id: "k",
          name: "shell",
          isFailure: false,
          result: "ok",
          encodedResult: "ok",
          providerExecuted: false,
          preliminary: false
        })
      ])
    )
    assert.strictEqual(classifyPrompt(followUp), "tool")
    assert.strictEqual(promptGoal(followUp), "fix the cache")
    assert.strictEqual(classifyPrompt(Prompt.empty), "other")
  })
})
