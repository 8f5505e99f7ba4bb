import { assert, describe, it } from "@effect/vitest"
import { SessionFs } from "@logbook/store"
import { tempDir } from "@logbook/testkit"
import { Effect, Schema } from "effect"
import { LanguageModel, Prompt } from "effect/ai"
import * as path from "node:path"
import { CodingTools, recordedAgentLayer } from "../../../../examples/effect-ai-agent.ts"
import { estimateTokens, resumePrompt } from "../../src/recorder/PromptResume.ts"

const encode = Schema.encodeSync(Prompt.Prompt)

/** The example's loop, keeping each task's history the way the host holds it. */
const runTaskKeepingHistory = (task: string) =>
  Effect.gen(function*() {
    const model = yield* LanguageModel.LanguageModel
    const tools = yield* CodingTools
    let history = Prompt.make(task)
    for (let round = 0; round < 10; round++) {
      const response = yield* model.generateText({ prompt: history, toolkit: tools })
      history = Prompt.concat(history, Prompt.fromResponseParts(response.content))
      if (response.toolCalls.length === 0) break
    }
    return history
  })

const record = (workspace: string, tasks: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const histories: Array<Prompt.Prompt> = []
    for (const task of tasks) histories.push(yield* runTaskKeepingHistory(task))
    return histories
  }).pipe(Effect.provide(recordedAgentLayer(workspace, "resume")))

const promptTokens = (prompt: Prompt.Prompt): number =>
  prompt.content.reduce((n, message) => {
    if (typeof message.content === "string") return n + estimateTokens(message.content)
    return n + message.content.reduce((m, part) => {
      switch (part.type) {
        case "text":
        case "reasoning":
          return m + estimateTokens(part.text)
        case "tool-call":
          return m + estimateTokens(part.name) + estimateTokens(JSON.stringify(part.params))
        case "tool-result":
          return m + estimateTokens(JSON.stringify(part.result))
        default:
          return m
      }
    }, 0)
  }, 0)

describe("PromptResume", () => {
  it.effect("record, restart, resume: the rebuilt Prompt equals the recorded history", () =>
    Effect.gen(function*() {
      const workspace = yield* tempDir("logbook-resume-")
      const histories = yield* record(workspace, ["Fix the cache", "Fix it again", "And once more"])
      const sessionsDir = path.join(workspace, ".logbook", "sessions")
      const resumed = yield* resumePrompt(sessionsDir, "resume", { budgetTokens: 1_000_000 }).pipe(
        Effect.provide(SessionFs.layerNode)
      )
      const expected = Prompt.fromMessages(histories.flatMap((history) => history.content))
      assert.deepStrictEqual(encode(resumed), encode(expected))
    }))

  it.effect("a token budget keeps the newest whole turns that fit", () =>
    Effect.gen(function*() {
      const workspace = yield* tempDir("logbook-resume-")
      const histories = yield* record(workspace, ["First task", "Second task", "Third task"])
      const sessionsDir = path.join(workspace, ".logbook", "sessions")
      const lastTwo = histories.slice(1)
      const budget = lastTwo.reduce((n, history) => n + promptTokens(history), 0)
      const resumed = yield* resumePrompt(sessionsDir, "resume", { budgetTokens: budget }).pipe(
        Effect.provide(SessionFs.layerNode)
      )
      assert.deepStrictEqual(
        encode(resumed),
        encode(Prompt.fromMessages(lastTwo.flatMap((history) => history.content)))
      )
      const none = yield* resumePrompt(sessionsDir, "resume", { budgetTokens: 0 }).pipe(
        Effect.provide(SessionFs.layerNode)
      )
      assert.deepStrictEqual(none.content, [])
    }))
})
