/**
 * A small coding agent on effect/ai, recorded by Logbook's `AiRecorder` (README.md#embedding,
 * docs/embedding.md): the model is a scripted `LanguageModel.make` provider (offline,
 * deterministic), the toolkit has a shell tool and an edit tool over an in-memory workspace, and
 * the loop is the ordinary effect/ai one — `generateText` with the toolkit until the model stops
 * calling tools. The only Logbook code is the layer. Run it with
 * `node --conditions=@logbook/source examples/run-effect-ai-agent.ts [workspace] [sessionId] [tasks]`.
 */
import { AiRecorder, SessionMemory } from "@logbook/runtime"
import { Effect, Layer, Ref, Schema, Stream } from "effect"
import type { Response } from "effect/ai"
import { LanguageModel, Prompt, Tool, Toolkit } from "effect/ai"

/** Runs a shell command in the (simulated) workspace. */
export const Shell = Tool.make("shell", {
  description: "Run a shell command in the workspace",
  parameters: Schema.Struct({ command: Schema.String }),
  success: Schema.Struct({ exitCode: Schema.Int, output: Schema.String })
})

/** Replaces text in one file of the workspace. */
export const Edit = Tool.make("edit", {
  description: "Replace `search` by `replace` in the file at `path`",
  parameters: Schema.Struct({ path: Schema.String, search: Schema.String, replace: Schema.String }),
  success: Schema.Struct({ path: Schema.String, replaced: Schema.Boolean })
})

/** The agent's tools. */
export const CodingTools = Toolkit.make(Shell, Edit)

/** The toolkit's handlers over an in-memory workspace: `npm test` fails while the TTL is 0. */
export const CodingToolsLayer = CodingTools.toLayer(Effect.gen(function*() {
  const files = yield* Ref.make<ReadonlyMap<string, string>>(new Map([["src/cache.ts", "export const ttl = 0\n"]]))
  return CodingTools.of({
    shell: ({ command }) =>
      Effect.map(Ref.get(files), (current) => {
        if (command !== "npm test") return { exitCode: 127, output: `${command}: not found` }
        const passing = current.get("src/cache.ts")?.includes("ttl = 60") === true
        return passing ? { exitCode: 0, output: "1 passing" } : { exitCode: 1, output: "1 failing: ttl is 0" }
      }),
    edit: ({ path, search, replace }) =>
      Ref.modify(files, (current): readonly [{ path: string; replaced: boolean }, ReadonlyMap<string, string>] => {
        const text = current.get(path)
        if (text === undefined || !text.includes(search)) return [{ path, replaced: false }, current]
        return [{ path, replaced: true }, new Map([...current, [path, text.replace(search, replace)]])]
      })
  })
}))

const usage = (input: number, output: number) => ({
  inputTokens: { uncached: input, total: input, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: output, text: output, reasoning: 0 }
})

/** The scripted answer to a prompt: a function of how many tool rounds the current task had. */
const scriptedParts = (prompt: Prompt.Prompt): Array<Response.PartEncoded> => {
  let rounds = 0
  for (const message of prompt.content) {
    if (message.role === "user") rounds = 0
    if (message.role === "tool") rounds++
  }
  const call = (name: string, params: unknown): Response.PartEncoded => ({
    type: "tool-call",
    id: `call-${prompt.content.length}-${name}`,
    name,
    params
  })
  const finish = (reason: "tool-calls" | "stop"): Response.PartEncoded => ({
    type: "finish",
    reason,
    usage: usage(1000 + 100 * rounds, 40)
  })
  switch (rounds) {
    case 0:
      return [
        { type: "reasoning", text: "Run the tests first." },
        call("shell", { command: "npm test" }),
        finish("tool-calls")
      ]
    case 1:
      return [call("edit", { path: "src/cache.ts", search: "ttl = 0", replace: "ttl = 60" }), finish("tool-calls")]
    case 2:
      return [call("shell", { command: "npm test" }), finish("tool-calls")]
    default:
      return [{ type: "text", text: "The cache TTL is 60 now; the tests pass." }, finish("stop")]
  }
}

/** An offline `LanguageModel`: answers from {@link scriptedParts}, streaming them part by part. */
export const ScriptedModel = Layer.effect(
  LanguageModel.LanguageModel,
  LanguageModel.make({
    generateText: (options) => Effect.succeed(scriptedParts(options.prompt)),
    streamText: (options) =>
      Stream.fromIterable(
        scriptedParts(options.prompt).flatMap((part): Array<Response.StreamPartEncoded> => {
          if (part.type !== "text") return part.type === "reasoning" ? [] : [part]
          return [
            { type: "text-start", id: "t" },
            { type: "text-delta", id: "t", delta: part.text },
            { type: "text-end", id: "t" }
          ]
        })
      )
  })
)

/** One task of the agent loop: model calls with the toolkit until the model stops calling tools. */
export const runTask = (task: string) =>
  Effect.gen(function*() {
    const model = yield* LanguageModel.LanguageModel
    const tools = yield* CodingTools
    let history = Prompt.make(task)
    for (let round = 0; round < 10; round++) {
      const response = yield* model.generateText({ prompt: history, toolkit: tools })
      history = Prompt.concat(history, Prompt.fromResponseParts(response.content))
      if (response.toolCalls.length === 0) return response.text
    }
    return "gave up after 10 rounds"
  })

/** The recorded model over the scripted one, in the session `sessionId` of `workspace`. */
export const recordedAgentLayer = (workspace: string, sessionId: string) =>
  AiRecorder.layerLanguageModel({ tools: { shell: { kind: "command" }, edit: { kind: "file" } } }).pipe(
    Layer.provide(ScriptedModel),
    Layer.provideMerge(SessionMemory.layerNode({ workspace, sessionId, retention: false })),
    Layer.merge(CodingToolsLayer)
  )

/** Runs `tasks` one after another, recorded; `onTurn` runs after each task's turn is durable. */
export const runEffectAiAgent = (
  workspace: string,
  sessionId: string,
  tasks: ReadonlyArray<string>,
  onTurn: (n: number, answer: string) => Effect.Effect<void> = () => Effect.void
) =>
  Effect.gen(function*() {
    for (const [i, task] of tasks.entries()) yield* Effect.flatMap(runTask(task), (answer) => onTurn(i + 1, answer))
    return yield* SessionMemory.use((memory) => memory.manifest)
  }).pipe(Effect.provide(recordedAgentLayer(workspace, sessionId)))
