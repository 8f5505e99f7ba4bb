/**
 * Test support for the recorder: a scripted `LanguageModel.make` provider that answers each call
 * with the next step of a script (encoded parts, a provider failure, or a hang the test
 * interrupts), and a toolkit of three tools (`echo`, `shell`, `edit`) whose handlers fail on demand.
 */
import { Deferred, Effect, Layer, Queue, Ref, Schema, Stream } from "effect"
import type { Response } from "effect/ai"
import { AiError, LanguageModel, Tool, Toolkit } from "effect/ai"

/** One scripted answer. */
export type ScriptStep =
  | { readonly _tag: "Parts"; readonly parts: ReadonlyArray<Response.PartEncoded> }
  | { readonly _tag: "Fail"; readonly message: string }
  | { readonly _tag: "Hang" }
  | {
    /** Streamed: the first `keep` stream parts of `parts`, then a hang; generated: a hang. */
    readonly _tag: "PartsThenHang"
    readonly parts: ReadonlyArray<Response.PartEncoded>
    readonly keep: number
  }

/** What the scripted model exposes to the test. */
export interface ScriptedModel {
  readonly layer: Layer.Layer<LanguageModel.LanguageModel>
  /** Completed when a `Hang` step is reached (the test then interrupts the call). */
  readonly hanging: Queue.Queue<void>
}

/** Usage of a finish part. */
export const finishUsage = (input: number, output: number) => ({
  inputTokens: { uncached: input, total: input, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: output, text: output, reasoning: 0 }
})

const toStreamParts = (parts: ReadonlyArray<Response.PartEncoded>): Array<Response.StreamPartEncoded> =>
  parts.flatMap((part, i): Array<Response.StreamPartEncoded> => {
    if (part.type === "text") {
      const id = `text-${i}`
      const half = Math.ceil(part.text.length / 2)
      return [
        { type: "text-start", id },
        { type: "text-delta", id, delta: part.text.slice(0, half) },
        { type: "text-delta", id, delta: part.text.slice(half) },
        { type: "text-end", id }
      ]
    }
    if (part.type === "reasoning") {
      const id = `reasoning-${i}`
      return [
        { type: "reasoning-start", id },
        { type: "reasoning-delta", id, delta: part.text },
        { type: "reasoning-end", id }
      ]
    }
    if (
      part.type === "tool-call" || part.type === "finish" || part.type === "tool-result"
      || part.type === "response-metadata"
    ) return [part]
    return []
  })

const providerError = (message: string) =>
  AiError.make({
    module: "ScriptedModel",
    method: "generate",
    reason: new AiError.InternalProviderError({ description: message })
  })

/** A model answering with `script`, one step per call (generate or stream), in order. */
export const scriptedModel = (script: ReadonlyArray<ScriptStep>) =>
  Effect.gen(function*() {
    const steps = yield* Ref.make(0)
    const hanging = yield* Queue.unbounded<void>()
    const next = Effect.map(Ref.getAndUpdate(steps, (n) => n + 1), (n) => script[n])
    const run = (step: ScriptStep | undefined) => {
      if (step === undefined) return Effect.fail(providerError("script exhausted"))
      switch (step._tag) {
        case "Parts":
          return Effect.succeed(step.parts)
        case "Fail":
          return Effect.fail(providerError(step.message))
        case "Hang":
        case "PartsThenHang":
          return Effect.andThen(Queue.offer(hanging, undefined), Effect.never)
      }
    }
    const model = yield* LanguageModel.make({
      generateText: () => Effect.flatMap(next, (step) => Effect.map(run(step), (parts) => [...parts])),
      streamText: () =>
        Stream.unwrap(Effect.map(next, (step) => {
          if (step?._tag === "Parts") return Stream.fromIterable(toStreamParts(step.parts))
          const kept = step?._tag === "PartsThenHang" ? toStreamParts(step.parts).slice(0, step.keep) : []
          return Stream.concat(
            Stream.fromIterable(kept),
            Stream.fromEffect(run(step)).pipe(Stream.flatMap(() => Stream.empty))
          )
        }))
    })
    return { layer: Layer.succeed(LanguageModel.LanguageModel, model), hanging } satisfies ScriptedModel
  })

const ToolParams = Schema.Struct({ path: Schema.String, fail: Schema.Boolean })
const ToolSuccess = Schema.Struct({ exitCode: Schema.Int, output: Schema.String })

const makeTool = <const Name extends string>(name: Name) =>
  Tool.make(name, { parameters: ToolParams, success: ToolSuccess, failure: Schema.String, failureMode: "return" })

/** Three tools with the same shape; `shell` is marked as a command and `edit` as a file edit by the tests. */
export const TestTools = Toolkit.make(makeTool("echo"), makeTool("shell"), makeTool("edit"))

const handler = (name: string) => ({ path, fail }: { readonly path: string; readonly fail: boolean }) =>
  fail ? Effect.fail(`${name} failed on ${path}`) : Effect.succeed({ exitCode: 0, output: `${name} ok ${path}` })

/** Handlers of {@link TestTools}. */
export const TestToolsLayer = TestTools.toLayer({
  echo: handler("echo"),
  shell: handler("shell"),
  edit: handler("edit")
})

/** The tool kinds the tests mark. */
export const testToolKinds = { shell: { kind: "command" }, edit: { kind: "file" } } as const

/** A deferred the test can await, re-exported for the suites. */
export const makeSignal = Deferred.make<void>
