import { assert, describe, it } from "@effect/vitest"
import { queryExplanation, verifySession } from "@logbook/projections"
import { SessionFs } from "@logbook/store"
import { tempDir } from "@logbook/testkit"
import { Effect, Exit, Fiber, Layer, Queue, Schema, Stream } from "effect"
import type { Response } from "effect/ai"
import { LanguageModel, Prompt } from "effect/ai"
import * as fs from "node:fs"
import * as path from "node:path"
import { AiRecorder } from "../../src/recorder/AiRecorder.ts"
import { SessionMemory } from "../../src/SessionMemory.ts"
import type { ScriptStep } from "./scriptedModel.ts"
import { finishUsage, scriptedModel, testToolKinds, TestTools, TestToolsLayer } from "./scriptedModel.ts"

const Small = Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 5000 }))
const CallSpec = Schema.Struct({ tool: Schema.Literals(["echo", "shell", "edit"]), fail: Schema.Boolean })
const RoundSpec = Schema.Struct({
  reasoning: Schema.Boolean,
  text: Schema.Boolean,
  calls: Schema.Array(CallSpec).check(Schema.isMinLength(1), Schema.isMaxLength(3)),
  input: Small,
  output: Small
})
const TurnSpec = Schema.Struct({
  rounds: Schema.Array(RoundSpec).check(Schema.isMaxLength(3)),
  end: Schema.Literals(["answer", "answer", "fail", "interrupt"]),
  stream: Schema.Boolean,
  input: Small,
  output: Small,
  /** Where a streamed final answer is interrupted: after this many of its 5 stream parts (mod 6). */
  cut: Small
})
const Conversation = Schema.Array(TurnSpec).check(Schema.isMinLength(1), Schema.isMaxLength(4))
type TurnSpec = typeof TurnSpec.Type

interface ExpectedCall {
  readonly id: string
  readonly name: string
  readonly args: unknown
  readonly output: string
  readonly failed: boolean
}

/** What one turn of the log says, in the shape the conversation predicts. */
interface TurnView {
  goal: string
  status: string
  messages: Array<string>
  reasoning: Array<string>
  calls: Array<ExpectedCall>
  usage: { input: number; output: number }
  commands: number
  fileChanges: number
}

const pathOf = (t: number, r: number, k: number) => `src/f${t}-${r}-${k}.ts`

/** The script of one turn and the view of it the log must hold. */
const planTurn = (spec: TurnSpec, t: number) => {
  const steps: Array<ScriptStep> = []
  const view: TurnView = {
    goal: `task ${t}`,
    status: spec.end === "answer" ? "turn.completed" : "turn.failed",
    messages: [],
    reasoning: [],
    calls: [],
    usage: { input: 0, output: 0 },
    commands: 0,
    fileChanges: 0
  }
  spec.rounds.forEach((round, r) => {
    const parts: Array<Response.PartEncoded> = []
    if (round.reasoning) {
      parts.push({ type: "reasoning", text: `think ${t}.${r}` })
      view.reasoning.push(`think ${t}.${r}`)
    }
    if (round.text) {
      parts.push({ type: "text", text: `say ${t}.${r}` })
      view.messages.push(`say ${t}.${r}`)
    }
    round.calls.forEach((call, k) => {
      const id = `c${t}-${r}-${k}`
      const args = { path: pathOf(t, r, k), fail: call.fail }
      parts.push({ type: "tool-call", id, name: call.tool, params: args })
      view.calls.push({
        id,
        name: call.tool,
        args,
        output: call.fail
          ? `${call.tool} failed on ${args.path}`
          : JSON.stringify({ exitCode: 0, output: `${call.tool} ok ${args.path}` }),
        failed: call.fail
      })
      if (call.tool === "shell") view.commands++
      if (call.tool === "edit") view.fileChanges++
    })
    parts.push({ type: "finish", reason: "tool-calls", usage: finishUsage(round.input, round.output) })
    view.usage.input += round.input
    view.usage.output += round.output
    steps.push({ _tag: "Parts", parts })
  })
  if (spec.end === "answer") {
    steps.push({
      _tag: "Parts",
      parts: [{ type: "text", text: `answer ${t}` }, {
        type: "finish",
        reason: "stop",
        usage: finishUsage(spec.input, spec.output)
      }]
    })
    view.messages.push(`answer ${t}`)
    view.usage.input += spec.input
    view.usage.output += spec.output
  } else if (spec.end === "interrupt" && spec.stream) {
    // text-start, two deltas, text-end, finish: the text is recorded once its part ended, whatever
    // the instant of the interruption. The finish part never reaches the caller here: with a
    // toolkit, effect/ai holds it back until the provider's stream ends (which it never does).
    const keep = spec.cut % 6
    steps.push({
      _tag: "PartsThenHang",
      keep,
      parts: [{ type: "text", text: `partial ${t}` }, {
        type: "finish",
        reason: "stop",
        usage: finishUsage(spec.input, spec.output)
      }]
    })
    if (keep >= 4) view.messages.push(`partial ${t}`)
  } else {
    steps.push(spec.end === "fail" ? { _tag: "Fail", message: `provider down ${t}` } : { _tag: "Hang" })
  }
  return { steps, view }
}

/** Folds the log's events into turn views. */
const viewsOf = (eventsPath: string): Array<TurnView> => {
  const views: Array<TurnView> = []
  const calls = new Map<string, { name: string; args: unknown; output: string; failed: boolean }>()
  let current: TurnView | undefined
  const lines = fs.readFileSync(eventsPath, "utf8").split("\n").filter((line) => line.length > 0)
  for (const line of lines) {
    const event = JSON.parse(line).event
    if (event.type === "turn.started") {
      current = {
        goal: event.context.goal,
        status: "open",
        messages: [],
        reasoning: [],
        calls: [],
        usage: { input: 0, output: 0 },
        commands: 0,
        fileChanges: 0
      }
      calls.clear()
      views.push(current)
    } else if (current !== undefined && event.type === "item.completed") {
      const item = event.item
      if (item.type === "agent_message") current.messages.push(item.text)
      if (item.type === "reasoning") current.reasoning.push(item.text)
      if (item.type === "command_execution") current.commands++
      if (item.type === "file_change") current.fileChanges++
      if (item.type === "tool_invocation" && item.outcome !== "cancelled") {
        calls.set(item.tool_call_id, { name: item.tool_name, args: item.arguments, output: "", failed: false })
      }
      if (item.type === "tool_output") {
        const call = calls.get(item.tool_call_id)
        if (call !== undefined) {
          call.output = item.output
          call.failed = item.status === "failed"
          current.calls.push({ id: item.tool_call_id, ...call })
        }
      }
    } else if (current !== undefined && (event.type === "turn.completed" || event.type === "turn.failed")) {
      current.status = event.type
      current.usage = { input: event.usage?.input_tokens ?? 0, output: event.usage?.output_tokens ?? 0 }
    }
  }
  return views
}

const recordedLayer = (workspace: string, sessionId: string, model: Layer.Layer<LanguageModel.LanguageModel>) =>
  AiRecorder.layerLanguageModel({ tools: testToolKinds }).pipe(
    Layer.provide(model),
    Layer.provideMerge(SessionMemory.layerNode({ workspace, sessionId, retention: false })),
    Layer.merge(TestToolsLayer)
  )

/** The host's loop for one turn: rounds until no tool call; a failure or an interruption ends it. */
const runTurn = (spec: TurnSpec, t: number, hanging: Queue.Queue<void>) =>
  Effect.gen(function*() {
    const model = yield* LanguageModel.LanguageModel
    const toolkit = yield* TestTools
    let history = Prompt.make(`task ${t}`)
    for (let call = 0; call <= spec.rounds.length; call++) {
      const request: Effect.Effect<ReadonlyArray<Response.AnyPart>, unknown> = spec.stream
        ? Stream.runCollect(model.streamText({ prompt: history, toolkit }))
        : Effect.map(model.generateText({ prompt: history, toolkit }), (response) => response.content)
      const fiber = yield* Effect.forkChild(request)
      if (call === spec.rounds.length && spec.end === "interrupt") {
        yield* Queue.take(hanging)
        yield* Fiber.interrupt(fiber)
        return
      }
      const exit = yield* Fiber.await(fiber)
      if (Exit.isFailure(exit)) return
      const parts = exit.value
      history = Prompt.concat(history, Prompt.fromResponseParts(parts))
      if (!parts.some((part) => part.type === "tool-call")) return
    }
  })

describe("AiRecorder", () => {
  it.effect.prop(
    "a random conversation through the recorded model reconstructs from the log, verifies clean and explains its actions",
    { conversation: Conversation },
    ({ conversation }) =>
      Effect.gen(function*() {
        const workspace = yield* tempDir("logbook-recorder-")
        const plans = conversation.map((spec, i) => planTurn(spec, i + 1))
        const scripted = yield* scriptedModel(plans.flatMap((plan) => plan.steps))
        yield* Effect.gen(function*() {
          for (const [i, spec] of conversation.entries()) yield* runTurn(spec, i + 1, scripted.hanging)
        }).pipe(Effect.provide(recordedLayer(workspace, "conv", scripted.layer)))

        const sessionsDir = path.join(workspace, ".logbook", "sessions")
        const views = viewsOf(path.join(sessionsDir, "conv", "events.jsonl"))
        // Tool results land in completion order (the toolkit runs calls concurrently): compare them by id.
        const byId = (view: TurnView) => ({ ...view, calls: [...view.calls].sort((a, b) => a.id.localeCompare(b.id)) })
        assert.deepStrictEqual(views.map(byId), plans.map((plan) => byId(plan.view)))

        const report = yield* verifySession(sessionsDir, "conv").pipe(Effect.provide(SessionFs.layerNode))
        assert.deepStrictEqual(report.findings, [])
        assert.strictEqual(report.scan.table.length, conversation.length)

        const explanation = yield* queryExplanation(sessionsDir, "conv", "session").pipe(
          Effect.provide(SessionFs.layerNode)
        )
        const expectedCommands = plans.reduce((n, plan) => n + plan.view.commands, 0)
        assert.strictEqual(explanation.actions.filter((a) => a.kind === "command").length, expectedCommands)
        assert.strictEqual(explanation.edits.length, plans.reduce((n, plan) => n + plan.view.fileChanges, 0))
        const failedTurns = plans.filter((plan) => plan.view.status === "turn.failed").length
        const failedTools = plans.reduce((n, plan) => n + plan.view.calls.filter((c) => c.failed).length, 0)
        assert.isAtLeast(explanation.failures.length, failedTurns + failedTools)
      }),
    { arbitrary: { runs: 30 }, timeout: 120_000 }
  )
})
