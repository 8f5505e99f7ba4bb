/**
 * P13 — recorder overhead (docs/embedding.md, goal ≥ 0.8). Measured: T turns, each one
 * `generateText` call of the decorated `LanguageModel` (`AiRecorder.layerLanguageModel`) over a
 * scripted `LanguageModel.make` provider answering a 20-part response (reasoning, 18 text parts,
 * finish): the recorder opens the turn, maps the parts to 19 items and completes the turn (its
 * durability barrier). Baseline: the same scripted call on the undecorated model followed by the
 * same 21 events appended directly with `SessionMemory.append`. Ratio = baseline ÷ recorder time.
 */
import type { ThreadEvent } from "@logbook/domain"
import { AiRecorder, initialMapper, mapParts, SessionMemory } from "@logbook/runtime"
import { Effect, Layer, Stream } from "effect"
import type { Response } from "effect/ai"
import { LanguageModel } from "effect/ai"
import * as Fs from "node:fs"
import * as Path from "node:path"
import type { BenchContext } from "./lib/context.ts"
import type { Outcome, Sample } from "./lib/measure.ts"
import { alternate, ms, rate } from "./lib/measure.ts"

const PARTS: Array<Response.PartEncoded> = [
  { type: "reasoning", text: "Read the failing test, then patch the TTL in src/cache.ts." },
  ...Array.from({ length: 18 }, (_, i): Response.PartEncoded => ({
    type: "text",
    text: `Step ${i + 1}: the cache entry expires after ttl seconds, so a ttl of 0 evicts it at once.`
  })),
  {
    type: "finish",
    reason: "stop",
    usage: {
      inputTokens: { uncached: 900, total: 1000, cacheRead: 100, cacheWrite: 0 },
      outputTokens: { total: 200, text: 180, reasoning: 20 }
    }
  }
]

const ScriptedModel = Layer.effect(
  LanguageModel.LanguageModel,
  LanguageModel.make({
    generateText: () => Effect.succeed(PARTS),
    streamText: () => Stream.die("P13 does not stream")
  })
)

const memoryLayer = (sessionsDir: string, sessionId: string) =>
  SessionMemory.layerNode({ workspace: sessionsDir, sessionsDir, sessionId, retention: false, deriveMemory: false })

/** The events the recorder writes for turn `n` (the baseline appends exactly these). */
const eventsOfTurn = (n: number, content: ReadonlyArray<Response.AnyPart>): Array<ThreadEvent> => {
  const step = mapParts(initialMapper(`t${n}`, 1), content, {})
  return [
    {
      type: "turn.started",
      context: {
        task_id: "p13",
        turn_id: `turn-${n}`,
        actor_id: "root",
        origin: "user",
        timestamp: "2026-01-01T00:00:00.000Z",
        goal: `task ${n}`
      }
    },
    ...step.items.map((item): ThreadEvent => ({ type: "item.completed", item })),
    { type: "turn.completed", usage: step.state.usage }
  ]
}

/** Runs P13 and prints its medians. */
export const runP13 = async (ctx: BenchContext): Promise<Outcome> => {
  const turns = ctx.profile.p2Turns
  const sessionsDir = Path.join(ctx.root, "p13")
  Fs.mkdirSync(sessionsDir, { recursive: true })

  const recorder = (round: number): Promise<Sample> => {
    const sessionId = `p13-recorder-${round}`
    return Effect.runPromise(
      Effect.gen(function*() {
        const model = yield* LanguageModel.LanguageModel
        const t0 = performance.now()
        for (let n = 1; n <= turns; n++) yield* model.generateText({ prompt: `task ${n}` })
        return { total: performance.now() - t0 }
      }).pipe(
        Effect.provide(
          AiRecorder.layerLanguageModel({ taskId: "p13" }).pipe(
            Layer.provide(ScriptedModel),
            Layer.provide(memoryLayer(sessionsDir, sessionId))
          )
        )
      )
    ).finally(() => Fs.rmSync(Path.join(sessionsDir, sessionId), { recursive: true, force: true }))
  }

  const baseline = (round: number): Promise<Sample> => {
    const sessionId = `p13-baseline-${round}`
    return Effect.runPromise(
      Effect.gen(function*() {
        const model = yield* LanguageModel.LanguageModel
        const memory = yield* SessionMemory
        const first = yield* model.generateText({ prompt: "task 0" })
        const events = Array.from({ length: turns }, (_, i) => eventsOfTurn(i + 1, first.content))
        const t0 = performance.now()
        for (let n = 1; n <= turns; n++) {
          yield* model.generateText({ prompt: `task ${n}` })
          for (const event of events[n - 1] ?? []) yield* memory.append(event)
        }
        return { total: performance.now() - t0 }
      }).pipe(
        Effect.provide(Layer.merge(ScriptedModel, memoryLayer(sessionsDir, sessionId)))
      )
    ).finally(() => Fs.rmSync(Path.join(sessionsDir, sessionId), { recursive: true, force: true }))
  }

  const { logbook: r, baseline: b } = await alternate(ctx.profile, recorder, baseline)
  const ratio = b.total / r.total
  console.log(`P13 recorder overhead: ${turns} turns × one 20-part response (21 events, barrier per turn)`)
  console.log(`  recorder ${ms(r.total)}  ${rate(turns, r.total, "turns")}`)
  console.log(`  baseline ${ms(b.total)}  ${rate(turns, b.total, "turns")}  (SessionMemory.append of the same events)`)
  console.log(`  ratio ${ratio.toFixed(2)}; goal ≥ 0.8`)
  return { id: "P13", value: ratio, text: ratio.toFixed(2), goal: "≥ 0.8", met: ratio >= 0.8 }
}
