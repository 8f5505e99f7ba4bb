/**
 * The effect/ai recorder example of the README, verbatim, so it stays type-checked: the example
 * agent's loop recorded with one Layer. Run it with
 * `npx node --conditions=@logbook/source examples/readme-ai-embedding.ts` (it records into
 * `./.logbook/sessions/ai-session`).
 */
import { AiRecorder, SessionMemory } from "@logbook/runtime"
import { Effect, Layer } from "effect"
import { LanguageModel, Prompt } from "effect/ai"
import { CodingTools, CodingToolsLayer, ScriptedModel } from "./effect-ai-agent.ts"
const task = Effect.gen(function*() {
  const model = yield* LanguageModel.LanguageModel
  const toolkit = yield* CodingTools
  let history = Prompt.make("Make the cache test pass") // ends with a user message: a new turn
  while (true) {
    const response = yield* model.generateText({ prompt: history, toolkit })
    history = Prompt.concat(history, Prompt.fromResponseParts(response.content)) // tool rounds: same turn
    if (response.toolCalls.length === 0) return response.text // a final answer completes the turn
  }
})

const recorded = AiRecorder.layerLanguageModel({ tools: { shell: { kind: "command" }, edit: { kind: "file" } } }).pipe(
  Layer.provide(ScriptedModel), // the host's own LanguageModel goes here
  Layer.provideMerge(SessionMemory.layerNode({ workspace: process.cwd(), sessionId: "ai-session" }))
)
task.pipe(Effect.provide(Layer.merge(recorded, CodingToolsLayer)), Effect.runPromise)
