import { assert, describe, it } from "@effect/vitest"
import type { ThreadEvent, ThreadItem } from "@logbook/domain"
import { decodeLineText } from "@logbook/domain"
import { queryExplanation, verifySession } from "@logbook/projections"
import { FaultController, ManifestCache, Retention, SessionFs, SessionRegistry } from "@logbook/store"
import { tempDir } from "@logbook/testkit"
import { Cause, Effect, Exit, Fiber, Layer, Queue, Result, Schema, Stream } from "effect"
import { LanguageModel, Prompt, Response, Tool, Toolkit } from "effect/ai"
import { TestClock } from "effect/testing"
import * as fs from "node:fs"
import * as path from "node:path"
import { runEffectAiAgent } from "../../../../examples/effect-ai-agent.ts"
import type { AiRecorderOptions } from "../../src/recorder/AiRecorder.ts"
import { AiRecorder, isAppendError } from "../../src/recorder/AiRecorder.ts"
import { SessionMemory } from "../../src/SessionMemory.ts"
import type { ScriptStep } from "./scriptedModel.ts"
import { finishUsage, scriptedModel, TestTools, TestToolsLayer } from "./scriptedModel.ts"

const answer = (text: string, input: number, output: number): ScriptStep => ({
  _tag: "Parts",
  parts: [{ type: "text", text }, { type: "finish", reason: "stop", usage: finishUsage(input, output) }]
})

const faultyStore = Layer.mergeAll(SessionRegistry.layer, Retention.layer, ManifestCache.layer).pipe(
  Layer.provideMerge(SessionFs.layerFaulty())
)

/** The recorded scripted model over a session on the fault-injecting file system. */
const recorded = (workspace: string, script: ReadonlyArray<ScriptStep>, options: AiRecorderOptions = {}) =>
  Layer.unwrap(Effect.map(scriptedModel(script), (scripted) =>
    AiRecorder.layerLanguageModel(options).pipe(
      Layer.provide(scripted.layer),
      Layer.provideMerge(SessionMemory.layer({ workspace, sessionId: "s", retention: false }))
    ))).pipe(Layer.provideMerge(faultyStore))

const eventsOf = (workspace: string): Array<ThreadEvent> =>
  fs.readFileSync(path.join(workspace, ".logbook", "sessions", "s", "events.jsonl"), "utf8")
    .split("\n").filter((line) => line.length > 0).map((line) => Result.getOrThrow(decodeLineText(line)).event)

const summary = (events: ReadonlyArray<ThreadEvent>) =>
  events.map((event) =>
    event.type === "item.started" || event.type === "item.completed" ? `${event.type}:${event.item.type}` : event.type
  )

const itemsOf = (events: ReadonlyArray<ThreadEvent>): Array<ThreadItem> =>
  events.flatMap((event) => event.type === "item.completed" ? [event.item] : [])

const Slow = Tool.make("slow", {
  parameters: Schema.Struct({ path: Schema.String }),
  success: Schema.Struct({ exitCode: Schema.Int, output: Schema.String })
})
const SlowTools = Toolkit.make(Slow)
/** The slow tool's handler signals `started` right before it sleeps (the test then moves the clock). */
const slowToolsLayer = (started: Queue.Queue<void>) =>
  SlowTools.toLayer({
    slow: ({ path: p }) =>
      Effect.andThen(
        Queue.offer(started, undefined),
        Effect.as(Effect.sleep("3 seconds"), { exitCode: 0, output: `read ${p}` })
      )
  })

describe("AiRecorder behaviour", () => {
  it.effect("recorder.turn keeps several prompts in one turn with their usage summed, and fails it with the cause", () =>
    Effect.gen(function*() {
      const workspace = yield* tempDir("logbook-recorder-")
      yield* Effect.gen(function*() {
        const recorder = yield* AiRecorder
        const model = yield* LanguageModel.LanguageModel
        yield* recorder.turn(
          "Plan, then do",
          Effect.andThen(model.generateText({ prompt: "plan" }), model.generateText({ prompt: "do" }))
        )
        const failed = yield* Effect.exit(recorder.turn("Again", model.generateText({ prompt: "again" })))
        assert.isTrue(Exit.isFailure(failed))
      }).pipe(Effect.provide(recorded(workspace, [
        answer("planned", 10, 1),
        answer("done", 20, 2),
        { _tag: "Fail", message: "provider down" }
      ])))
      const events = eventsOf(workspace)
      assert.deepStrictEqual(summary(events), [
        "turn.started",
        "item.completed:agent_message",
        "item.completed:agent_message",
        "turn.completed",
        "turn.started",
        "item.completed:error",
        "turn.failed"
      ])
      const completed = events[3]
      assert.deepStrictEqual(completed?.type === "turn.completed" ? completed.usage : undefined, {
        input_tokens: 30,
        cached_input_tokens: 0,
        cache_creation_tokens: 0,
        output_tokens: 3
      })
      const failed = events[6]
      assert.include(failed?.type === "turn.failed" ? failed.message : "", "provider down")
      assert.deepStrictEqual(
        events.flatMap((e) => e.type === "turn.started" ? [e.context?.goal] : []),
        ["Plan, then do", "Again"]
      )
    }))

  it.effect("tool results the host resolves itself are recorded from the next round's prompt, in the same turn", () =>
    Effect.gen(function*() {
      const workspace = yield* tempDir("logbook-recorder-")
      yield* Effect.gen(function*() {
        const model = yield* LanguageModel.LanguageModel
        const toolkit = yield* TestTools
        const first = yield* model.generateText({ prompt: "list", toolkit, disableToolCallResolution: true })
        const result = Response.makePart("tool-result", {
          id: "k1",
          name: "echo",
          isFailure: false,
          result: { exitCode: 0, output: "a b" },
          encodedResult: { exitCode: 0, output: "a b" },
          providerExecuted: false,
          preliminary: false
        })
        const history = Prompt.concat(Prompt.make("list"), Prompt.fromResponseParts([...first.content, result]))
        yield* model.generateText({ prompt: history, toolkit, disableToolCallResolution: true })
      }).pipe(
        Effect.provide(recorded(workspace, [
          {
            _tag: "Parts",
            parts: [{ type: "tool-call", id: "k1", name: "echo", params: { path: "x", fail: false } }, {
              type: "finish",
              reason: "tool-calls",
              usage: finishUsage(1, 1)
            }]
          },
          answer("a and b", 2, 2)
        ])),
        Effect.provide(TestToolsLayer)
      )
      const events = eventsOf(workspace)
      assert.deepStrictEqual(summary(events), [
        "turn.started",
        "item.started:tool_invocation",
        "item.completed:tool_invocation",
        "item.completed:tool_output",
        "item.completed:agent_message",
        "turn.completed"
      ])
      const output = itemsOf(events).find((item) => item.type === "tool_output")
      assert.deepStrictEqual(
        output?.type === "tool_output" ? [output.tool_call_id, output.output] : [],
        ["k1", JSON.stringify({ exitCode: 0, output: "a b" })]
      )
    }))

  it.effect("generateObject is recorded like generateText: the JSON answer is the turn's message", () =>
    Effect.gen(function*() {
      const workspace = yield* tempDir("logbook-recorder-")
      yield* Effect.gen(function*() {
        const model = yield* LanguageModel.LanguageModel
        const response = yield* model.generateObject({
          prompt: "the new ttl",
          schema: Schema.Struct({ ttl: Schema.Int })
        })
        assert.deepStrictEqual(response.value, { ttl: 60 })
      }).pipe(Effect.provide(recorded(workspace, [answer("{\"ttl\":60}", 3, 4)])))
      const events = eventsOf(workspace)
      assert.deepStrictEqual(summary(events), ["turn.started", "item.completed:agent_message", "turn.completed"])
    }))

  it.effect("a stream interrupted mid-text fails its turn and records no half-finished item", () =>
    Effect.gen(function*() {
      const workspace = yield* tempDir("logbook-recorder-")
      yield* Effect.gen(function*() {
        const model = yield* LanguageModel.LanguageModel
        const exit = yield* Effect.exit(Stream.runForEach(
          model.streamText({ prompt: "stream please" }),
          (part) => part.type === "text-delta" ? Effect.interrupt : Effect.void
        ))
        assert.isTrue(Exit.isFailure(exit))
        // A complete stream afterwards records its text when the text part ends.
        yield* Stream.runDrain(model.streamText({ prompt: "again" }))
      }).pipe(Effect.provide(recorded(workspace, [answer("half", 1, 1), answer("whole", 2, 2)])))
      const events = eventsOf(workspace)
      assert.deepStrictEqual(summary(events), [
        "turn.started",
        "turn.failed",
        "turn.started",
        "item.completed:agent_message",
        "turn.completed"
      ])
      const failed = events[1]
      assert.strictEqual(failed?.type === "turn.failed" ? failed.message : "", "interrupted")
      assert.deepStrictEqual(itemsOf(events).flatMap((item) => item.type === "agent_message" ? [item.text] : []), [
        "whole"
      ])
    }))

  it.effect("a persistence failure reaches the caller (typed inside recorder.turn); with log it is logged", () =>
    Effect.gen(function*() {
      const workspace = yield* tempDir("logbook-recorder-")
      yield* Effect.gen(function*() {
        const model = yield* LanguageModel.LanguageModel
        const recorder = yield* AiRecorder
        const faults = yield* FaultController
        yield* faults.arm({ _tag: "Fail", call: 0, code: "ENOSPC", op: "write", persistent: true })
        const exit = yield* Effect.exit(model.generateText({ prompt: "hi" }))
        assert.isTrue(Exit.isFailure(exit) && isAppendError(Cause.squash(exit.cause)))
        const typed = yield* Effect.flip(recorder.turn("typed", model.generateText({ prompt: "hi" })))
        assert.strictEqual(typed._tag, "StoreIoError")
        yield* faults.reset
      }).pipe(Effect.provide(recorded(workspace, [answer("a", 1, 1), answer("b", 1, 1)])))

      const logged = yield* tempDir("logbook-recorder-")
      yield* Effect.gen(function*() {
        const model = yield* LanguageModel.LanguageModel
        const faults = yield* FaultController
        yield* faults.arm({ _tag: "Fail", call: 0, code: "ENOSPC", op: "write", persistent: true })
        const response = yield* model.generateText({ prompt: "hi" })
        assert.strictEqual(response.text, "a")
        yield* faults.reset
      }).pipe(Effect.provide(recorded(logged, [answer("a", 1, 1)], { onPersistenceError: "log" })))
    }))

  it.effect("recordToolkit records an execution with its Clock duration outside generateText, and once inside it", () =>
    Effect.gen(function*() {
      const workspace = yield* tempDir("logbook-recorder-")
      const started = yield* Queue.unbounded<void>()
      yield* Effect.gen(function*() {
        const recorder = yield* AiRecorder
        const model = yield* LanguageModel.LanguageModel
        const toolkit = recorder.recordToolkit(yield* SlowTools)
        const direct = yield* Effect.forkChild(
          Stream.runCollect(Stream.unwrap(toolkit.handle("slow", { path: "a.ts" })))
        )
        yield* Queue.take(started)
        yield* TestClock.adjust("3 seconds")
        yield* Fiber.join(direct)
        const looped = yield* Effect.forkChild(model.generateText({ prompt: "read b", toolkit }))
        yield* Queue.take(started)
        yield* TestClock.adjust("3 seconds")
        yield* Fiber.join(looped)
      }).pipe(
        Effect.provide(recorded(workspace, [{
          _tag: "Parts",
          parts: [{ type: "tool-call", id: "call-b", name: "slow", params: { path: "b.ts" } }, {
            type: "finish",
            reason: "tool-calls",
            usage: finishUsage(5, 5)
          }]
        }])),
        Effect.provide(slowToolsLayer(started))
      )
      const events = eventsOf(workspace)
      const latencies = itemsOf(events).flatMap((item) => item.type === "harness" ? [item.duration_ms] : [])
      assert.deepStrictEqual(latencies, [3000, 3000])
      const completedIds = itemsOf(events).map((item) => item.id)
      assert.strictEqual(new Set(completedIds).size, completedIds.length, "no item is recorded twice")
      assert.strictEqual(completedIds.filter((id) => id.includes("-out-")).length, 2)
    }))

  it.effect("the example agent records every task as a completed turn that verifies clean and explains its work", () =>
    Effect.gen(function*() {
      const workspace = yield* tempDir("logbook-example-")
      const acks: Array<number> = []
      const manifest = yield* runEffectAiAgent(
        workspace,
        "example",
        ["Fix the cache", "Check again", "Once more"],
        (n) => Effect.sync(() => void acks.push(n))
      )
      assert.deepStrictEqual(acks, [1, 2, 3])
      assert.strictEqual(manifest.turn_count, 3)
      assert.strictEqual(manifest.in_turn, false)
      const sessionsDir = path.join(workspace, ".logbook", "sessions")
      const report = yield* verifySession(sessionsDir, "example").pipe(Effect.provide(SessionFs.layerNode))
      assert.deepStrictEqual(report.findings, [])
      const explanation = yield* queryExplanation(sessionsDir, "example", "session").pipe(
        Effect.provide(SessionFs.layerNode)
      )
      assert.strictEqual(explanation.actions.filter((a) => a.kind === "command").length, 6)
      assert.strictEqual(explanation.edits.length, 3)
      assert.deepStrictEqual(explanation.usage, {
        input_tokens: 3 * 4600,
        cached_input_tokens: 0,
        cache_creation_tokens: 0,
        output_tokens: 3 * 160
      })
    }))
})

describe("README", () => {
  it("shows the effect/ai recorder example verbatim, in at most 20 lines", () => {
    const root = path.join(import.meta.dirname, "..", "..", "..", "..")
    const readme = fs.readFileSync(path.join(root, "README.md"), "utf8")
    const section = readme.slice(readme.indexOf("### Recording an effect/ai agent"))
    const open = section.indexOf("```ts\n") + 6
    const block = section.slice(open, section.indexOf("\n```", open))
    const example = fs.readFileSync(path.join(root, "examples", "readme-ai-embedding.ts"), "utf8")
    const body = example.slice(example.indexOf("import { AiRecorder")).trimEnd()
    assert.strictEqual(block, body.replace("\"./effect-ai-agent.ts\"", "\"./examples/effect-ai-agent.ts\""))
    assert.isAtMost(block.split("\n").length, 20)
  })
})
