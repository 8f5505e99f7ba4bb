/**
 * Records an effect/ai agent into its session (docs/embedding.md#recorder): `AiRecorder` keeps
 * the turn state of one session and `AiRecorder.layerLanguageModel` decorates the host's
 * `LanguageModel` so every `generateText` / `generateObject` / `streamText` call is appended
 * through `SessionMemory`, nothing else changed for the caller. `recordToolkit` wraps a toolkit's
 * handlers so executions are recorded with their durations, also outside `generateText`.
 *
 * Turn delimiting: a call whose prompt ends with a new user message opens a turn (closing an
 * automatic turn still open as completed); a call whose prompt ends with tool results is a
 * follow-up round and stays in the open turn; a response without tool calls completes it; a
 * failed or interrupted call fails it. `recorder.turn(prompt, effect)` delimits a turn
 * explicitly: calls inside it never open or close turns.
 */
import type { ThreadEvent, ThreadItem, UsageTotals } from "@logbook/domain"
import { addUsage, formatRfc3339, zeroUsage } from "@logbook/domain"
import type { AppendError, StoreIoError } from "@logbook/store"
import { InvalidEvent, StoreIoError as StoreIoErrorClass, SummaryHookFailed } from "@logbook/store"
import type { Schema, SchemaAST } from "effect"
import { Cause, Clock, Context, Effect, Exit, Layer, Semaphore, Stream } from "effect"
import type { Response, Tool, Toolkit } from "effect/ai"
import { LanguageModel, Prompt } from "effect/ai"
import type { NoExcessProperties } from "effect/Types"
import { SessionMemory } from "../SessionMemory.ts"
import type { MapperState, ToolCallRecord, ToolKinds } from "./AiMapping.ts"
import {
  classifyPrompt,
  endsTurn,
  initialMapper,
  invocationItem,
  jsonText,
  mapParts,
  promptGoal,
  resultItems,
  stepMapper,
  toolItemIds,
  trailingToolResults
} from "./AiMapping.ts"

/** Options of {@link AiRecorder.layer}. */
export interface AiRecorderOptions {
  /** Tools the host marks as shell commands or file edits (recorded also as `command_execution` / `file_change`). */
  readonly tools?: ToolKinds | undefined
  /**
   * What a persistence failure does to the call that recorded it: `fail` (default, the
   * reference's behaviour) makes it reach the caller, `log` logs a warning and continues.
   */
  readonly onPersistenceError?: "fail" | "log" | undefined
  /** `task_id` of the turns' execution context (default: the session id). */
  readonly taskId?: string | undefined
  /** `actor_id` of the turns' execution context (default `root`). */
  readonly actorId?: string | undefined
}

/** Options of one explicit turn. */
export interface TurnOptions {
  /** Where the turn's input came from (default `user`). */
  readonly origin?: "user" | "correction" | "plan_approval" | "continuation" | "retry" | undefined
}

/** What the host sees of the recorder. */
export interface AiRecorderApi {
  /**
   * Runs `effect` as one turn whose goal is the prompt's last user text: `turn.started` before,
   * `turn.completed` with the usage of every model call inside after, `turn.failed` with the
   * cause when it fails or is interrupted. Persistence failures are typed here (`AppendError`).
   */
  readonly turn: <A, E, R>(
    prompt: Prompt.RawInput,
    effect: Effect.Effect<A, E, R>,
    options?: TurnOptions
  ) => Effect.Effect<A, E | AppendError, R>
  /** The given model with every call recorded (what {@link AiRecorder.layerLanguageModel} provides). */
  readonly decorate: (model: LanguageModel.LanguageModel) => LanguageModel.LanguageModel
  /** The toolkit with every execution recorded, with its duration, inside a turn or not. */
  readonly recordToolkit: <Tools extends Record<string, Tool.Any>>(
    toolkit: Toolkit.WithHandler<Tools>
  ) => Toolkit.WithHandler<Tools>
  /** Completes the automatic turn still open (a loop that stopped after a tool round); no-op otherwise. */
  readonly closeTurn: Effect.Effect<void, AppendError>
}

/** Whether a defect is one of the store's append errors (how the decorated model surfaces them). */
export const isAppendError = (u: unknown): u is AppendError =>
  u instanceof StoreIoErrorClass || u instanceof InvalidEvent || u instanceof SummaryHookFailed

interface OpenTurn {
  readonly key: string
  readonly explicit: boolean
  calls: number
  usage: UsageTotals
  pending: ReadonlyMap<string, ToolCallRecord>
}

const causeMessage = (cause: Cause.Cause<unknown>): string => {
  if (Cause.hasInterruptsOnly(cause)) return "interrupted"
  const error = Cause.squash(cause)
  return error instanceof Error ? `${error.name}: ${error.message}` : jsonText(error)
}

const eventOf = (item: ThreadItem): ThreadEvent =>
  "status" in item && item.status === "in_progress"
    ? { type: "item.started", item }
    : { type: "item.completed", item }

/** The items a tool-round prompt completes: results the host resolved itself for calls still open. */
const promptResultItems = (turn: OpenTurn, prompt: Prompt.Prompt, kinds: ToolKinds): ReadonlyArray<ThreadItem> => {
  const items: Array<ThreadItem> = []
  const pending = new Map(turn.pending)
  for (const part of trailingToolResults(prompt)) {
    const call = pending.get(part.id)
    if (call === undefined) continue
    pending.delete(part.id)
    items.push(
      ...resultItems(turn.key, call, {
        callId: part.id,
        name: part.name,
        result: part.result,
        isFailure: part.isFailure
      }, kinds)
    )
  }
  turn.pending = pending
  return items
}

/** A toolkit-less call (`{}` in effect/ai's signatures). */
type NoTools = Record<never, never>
type WithoutToolkit = Omit<LanguageModel.GenerateTextOptions<NoTools>, "toolkit"> & { readonly toolkit?: undefined }
type WithToolkit<Tools extends Record<string, Tool.Any>> = LanguageModel.GenerateTextOptions<Tools> & {
  readonly toolkit: LanguageModel.ToolkitInput<Tools>
}
type LooseOptions = LanguageModel.GenerateTextOptions<Record<string, Tool.Any>>
type LooseObjectOptions = LanguageModel.GenerateObjectOptions<
  Record<string, Tool.Any>,
  Schema.Encoder<Record<string, unknown>, unknown>
>
interface LooseResponse {
  readonly content: ReadonlyArray<Response.AnyPart>
}

/** Builds the recorder of the session in scope (see the module comment). */
const makeRecorder = Effect.fn("Recorder.make")(function*(options: AiRecorderOptions) {
  const memory = yield* SessionMemory
  const kinds = options.tools ?? {}
  const manifest = yield* memory.manifest
  const lock = yield* Semaphore.make(1)
  let nextTurn = manifest.turn_count + (manifest.in_turn === true ? 1 : 0) + 1
  let open: OpenTurn | undefined
  let freeCalls = 0
  /** Ids of tool items the toolkit wrapper appended (the model's mapping skips them). */
  const recordedIds = new Set<string>()

  const persist = <A>(effect: Effect.Effect<A, AppendError>): Effect.Effect<void, AppendError> =>
    options.onPersistenceError === "log"
      ? Effect.catch(
        Effect.asVoid(effect),
        (error) => Effect.logWarning(`recording into ${memory.sessionId} failed: ${error.message}`)
      )
      : Effect.asVoid(effect)

  const appendItems = (items: ReadonlyArray<ThreadItem>) => {
    const fresh = items.filter((item) => !recordedIds.has(item.id))
    return fresh.length === 0 ? Effect.void : persist(memory.appendAll(fresh.map(eventOf)))
  }

  const completeOpen = Effect.suspend(() => {
    const turn = open
    if (turn === undefined) return Effect.void
    open = undefined
    return persist(memory.append({ type: "turn.completed", usage: turn.usage }))
  })

  const failOpen = (message: string) =>
    Effect.suspend(() => {
      const turn = open
      if (turn === undefined) return Effect.void
      open = undefined
      // Calls still waiting for a result are closed as cancelled: the log holds no open tool call.
      const cancelled: Array<ThreadEvent> = [...turn.pending.values()].map((call) => ({
        type: "item.completed",
        item: { ...invocationItem(turn.key, call), status: "failed", outcome: "cancelled" }
      }))
      return persist(memory.appendAll([...cancelled, { type: "turn.failed", message, usage: turn.usage }]))
    })

  const startTurn = (goal: string, origin: NonNullable<TurnOptions["origin"]>, explicit: boolean) =>
    Effect.gen(function*() {
      yield* completeOpen
      const number = nextTurn++
      // Ids carry their turn's key, so the previous turn's are never seen again.
      recordedIds.clear()
      const timestamp = formatRfc3339(yield* Clock.currentTimeMillis, "Z")
      open = { key: `t${number}`, explicit, calls: 0, usage: zeroUsage, pending: new Map() }
      yield* persist(memory.append({
        type: "turn.started",
        context: {
          task_id: options.taskId ?? memory.sessionId,
          turn_id: `turn-${number}`,
          actor_id: options.actorId ?? "root",
          origin,
          timestamp,
          goal
        }
      }))
    })

  /** Opens (or joins) the turn of a call and returns the mapper for its response. */
  const beginCall = (input: Prompt.RawInput) =>
    lock.withPermit(Effect.gen(function*() {
      const prompt = Prompt.make(input)
      const shape = classifyPrompt(prompt)
      const explicit = open?.explicit === true
      if (!explicit && (shape === "user" || open === undefined)) {
        yield* startTurn(promptGoal(prompt), shape === "user" ? "user" : "continuation", false)
      }
      const turn = open
      if (turn === undefined) return initialMapper("t0", 0)
      yield* appendItems(promptResultItems(turn, prompt, kinds))
      turn.calls++
      return initialMapper(turn.key, turn.calls, turn.pending)
    }))

  /** Adds a finished call's usage; an automatic turn whose response asked for no tool completes. */
  const endCall = (state: MapperState) =>
    lock.withPermit(Effect.gen(function*() {
      const turn = open
      if (turn === undefined || turn.key !== state.turnKey) return
      turn.usage = addUsage(turn.usage, state.usage)
      turn.pending = state.calls
      if (!turn.explicit && endsTurn(state)) yield* completeOpen
    }))

  /** A failed or interrupted call fails its automatic turn; inside an explicit turn it leaves an error item. */
  const failCall = (state: MapperState, cause: Cause.Cause<unknown>) =>
    lock.withPermit(Effect.gen(function*() {
      const turn = open
      if (turn === undefined || turn.key !== state.turnKey) return
      turn.usage = addUsage(turn.usage, state.usage)
      turn.pending = state.calls
      const message = causeMessage(cause)
      if (turn.explicit) {
        yield* appendItems([{ id: `${turn.key}-c${state.call}-fail`, type: "error", message }])
      } else {
        yield* failOpen(message)
      }
    }))

  const record = (state: MapperState, parts: ReadonlyArray<Response.AnyPart>) =>
    lock.withPermit(Effect.suspend(() => {
      const step = mapParts(state, parts, kinds)
      return Effect.as(appendItems(step.items), step.state)
    }))

  /** Records a whole-response call: the turn opens before the call, items and usage land after it. */
  const recordCall = <A extends LooseResponse, E, R>(
    input: Prompt.RawInput,
    call: Effect.Effect<A, E, R>
  ): Effect.Effect<A, E, R> =>
    Effect.orDie(beginCall(input)).pipe(
      Effect.flatMap((state) =>
        call.pipe(
          Effect.onExit((exit) =>
            Exit.isSuccess(exit)
              ? Effect.orDie(Effect.flatMap(record(state, exit.value.content), endCall))
              : Effect.orDie(failCall(state, exit.cause))
          )
        )
      )
    )

  /** Records a stream as it is consumed: each part's items are appended when the part ends. */
  const recordStream = <E, R>(
    input: Prompt.RawInput,
    stream: Stream.Stream<Response.AnyPart, E, R>
  ): Stream.Stream<Response.AnyPart, E, R> =>
    Stream.unwrap(Effect.map(Effect.orDie(beginCall(input)), (initial) => {
      let state = initial
      return stream.pipe(
        Stream.tap((part) =>
          Effect.orDie(lock.withPermit(Effect.suspend(() => {
            const step = stepMapper(state, part, kinds)
            state = step.state
            return appendItems(step.items)
          })))
        ),
        Stream.onExit((exit) =>
          Exit.isSuccess(exit) ? Effect.orDie(endCall(state)) : Effect.orDie(failCall(state, exit.cause))
        )
      )
    }))

  const decorate = (model: LanguageModel.LanguageModel): LanguageModel.LanguageModel => {
    const generateLoose: (options: LooseOptions) => Effect.Effect<LooseResponse, unknown, unknown> = model.generateText
    const objectLoose: (
      options: LooseObjectOptions
    ) => Effect.Effect<LooseResponse, unknown, unknown> = model.generateObject
    const streamLoose: (options: LooseOptions) => Stream.Stream<Response.AnyPart, unknown, unknown> = model.streamText

    function generateText<Options extends NoExcessProperties<WithoutToolkit, Options>>(
      options: Options & WithoutToolkit
    ): Effect.Effect<
      LanguageModel.GenerateTextResponse<NoTools, LanguageModel.ExtractToolParametersModeWithoutToolkit<Options>>,
      LanguageModel.ExtractError<Options>,
      LanguageModel.ExtractServices<Options>
    >
    function generateText<
      Tools extends Record<string, Tool.Any>,
      Options extends NoExcessProperties<WithToolkit<Tools>, Options>
    >(
      options: Options & WithToolkit<Tools>
    ): Effect.Effect<
      LanguageModel.GenerateTextResponse<Tools, LanguageModel.ExtractToolParametersMode<Options>>,
      LanguageModel.ExtractError<Options>,
      LanguageModel.ExtractServices<Options>
    >
    function generateText(options: LooseOptions): Effect.Effect<LooseResponse, unknown, unknown> {
      return recordCall(options.prompt, generateLoose(options))
    }

    function streamText<Options extends NoExcessProperties<WithoutToolkit, Options>>(
      options: Options & WithoutToolkit
    ): Stream.Stream<
      Response.StreamPart<NoTools, LanguageModel.ExtractToolParametersModeWithoutToolkit<Options>>,
      LanguageModel.ExtractError<Options>,
      LanguageModel.ExtractServices<Options>
    >
    function streamText<
      Tools extends Record<string, Tool.Any>,
      Options extends NoExcessProperties<WithToolkit<Tools>, Options>
    >(
      options: Options & WithToolkit<Tools>
    ): Stream.Stream<
      Response.StreamPart<Tools, LanguageModel.ExtractToolParametersMode<Options>>,
      LanguageModel.ExtractError<Options>,
      LanguageModel.ExtractServices<Options>
    >
    function streamText(options: LooseOptions): Stream.Stream<Response.AnyPart, unknown, unknown> {
      return recordStream(options.prompt, streamLoose(options))
    }

    function generateObject<
      ObjectEncoded extends Record<string, unknown>,
      StructuredOutputSchema extends Schema.Encoder<ObjectEncoded, unknown>,
      Options extends NoExcessProperties<
        LanguageModel.GenerateObjectOptions<Record<string, Tool.Any>, StructuredOutputSchema>,
        Options
      >,
      Tools extends Record<string, Tool.Any> = NoTools
    >(
      options: Options & LanguageModel.GenerateObjectOptions<Tools, StructuredOutputSchema>
    ): Effect.Effect<
      LanguageModel.GenerateObjectResponse<
        Tools,
        StructuredOutputSchema["Type"],
        LanguageModel.ExtractToolParametersMode<Options>
      >,
      LanguageModel.ExtractError<Options>,
      LanguageModel.ExtractServices<Options> | StructuredOutputSchema["DecodingServices"]
    >
    function generateObject(
      options: LooseObjectOptions
    ): Effect.Effect<LooseResponse, unknown, unknown> {
      return recordCall(options.prompt, objectLoose(options))
    }

    return { ...model, generateText, generateObject, streamText }
  }

  const recordExecution = (
    name: string,
    callId: string,
    params: unknown,
    outcome: { readonly result: unknown; readonly isFailure: boolean },
    durationMs: number
  ) =>
    lock.withPermit(Effect.suspend(() => {
      const key = open?.key ?? "free"
      const call: ToolCallRecord = { callId, name, params }
      const items: Array<ThreadItem> = [
        ...resultItems(key, call, { callId, name, result: outcome.result, isFailure: outcome.isFailure }, kinds),
        {
          id: toolItemIds(key, callId).latency,
          type: "harness",
          event: "tool_latency_recorded",
          command: name,
          duration_ms: Math.max(0, Math.round(durationMs)),
          status: outcome.isFailure ? "failed" : "completed"
        }
      ]
      return Effect.andThen(appendItems(items), Effect.sync(() => items.forEach((item) => recordedIds.add(item.id))))
    }))

  const recordToolkit = <Tools extends Record<string, Tool.Any>>(
    toolkit: Toolkit.WithHandler<Tools>
  ): Toolkit.WithHandler<Tools> => {
    const handle = <Name extends keyof Tools>(
      name: Name,
      params: Tool.ParametersEncoded<Tools[Name]>,
      toolCallId?: string,
      parseOptions?: SchemaAST.ParseOptions
    ) =>
      Effect.gen(function*() {
        const started = yield* Clock.currentTimeMillis
        const callId = toolCallId ?? `call-${++freeCalls}`
        const toolName = String(name)
        const elapsed = Effect.map(Clock.currentTimeMillis, (now) => now - started)
        const stream = yield* toolkit.handle(name, params, toolCallId, parseOptions).pipe(
          Effect.tapCause((cause) =>
            Effect.flatMap(
              elapsed,
              (ms) =>
                Effect.orDie(recordExecution(toolName, callId, params, {
                  result: causeMessage(cause),
                  isFailure: true
                }, ms))
            )
          )
        )
        return stream.pipe(
          Stream.tap((output) =>
            output.preliminary
              ? Effect.void
              : Effect.flatMap(elapsed, (ms) =>
                Effect.orDie(recordExecution(toolName, callId, params, {
                  result: output.encodedResult,
                  isFailure: output.isFailure
                }, ms)))
          ),
          Stream.onExit((exit) =>
            Exit.isSuccess(exit)
              ? Effect.void
              : Effect.flatMap(elapsed, (ms) =>
                Effect.orDie(recordExecution(toolName, callId, params, {
                  result: causeMessage(exit.cause),
                  isFailure: true
                }, ms)))
          )
        )
      })
    return { tools: toolkit.tools, handle }
  }

  const turn = <A, E, R>(
    prompt: Prompt.RawInput,
    effect: Effect.Effect<A, E, R>,
    turnOptions: TurnOptions = {}
  ): Effect.Effect<A, E | AppendError, R> =>
    Effect.uninterruptibleMask((restore) =>
      Effect.gen(function*() {
        yield* lock.withPermit(startTurn(promptGoal(Prompt.make(prompt)), turnOptions.origin ?? "user", true))
        const exit = yield* Effect.exit(restore(effect))
        if (Exit.isSuccess(exit)) {
          yield* lock.withPermit(completeOpen)
          return exit.value
        }
        yield* lock.withPermit(failOpen(causeMessage(exit.cause)))
        return yield* exit
      })
    ).pipe(
      Effect.catchDefect((defect) => isAppendError(defect) ? Effect.fail(defect) : Effect.die(defect))
    )

  // A turn still open when the session closes is completed (automatic) so the log never keeps it open.
  yield* Effect.addFinalizer(() =>
    lock.withPermit(
      Effect.suspend(() => open?.explicit === false ? completeOpen : failOpen("the session closed inside the turn"))
    ).pipe(Effect.catch((error) => Effect.logWarning(`closing the recorded turn failed: ${error.message}`)))
  )

  return AiRecorder.of({ turn, decorate, recordToolkit, closeTurn: lock.withPermit(completeOpen) })
})

/** The recorder of the session in scope: turn state, the model decorator and the toolkit wrapper. */
export class AiRecorder extends Context.Service<AiRecorder, AiRecorderApi>()("@logbook/runtime/AiRecorder") {
  /**
   * The recorder over the `SessionMemory` in scope. On release, an automatic turn still open is
   * completed and an explicit one failed, so the session never ends inside a turn.
   *
   * **Gotchas**: build it inside the `SessionMemory` layer's lifetime (provide `SessionMemory`
   * to it); its finalizer appends, so it must run before the session closes.
   */
  static readonly layer = (
    options: AiRecorderOptions = {}
  ): Layer.Layer<AiRecorder, StoreIoError, SessionMemory> => Layer.effect(AiRecorder, makeRecorder(options))

  /**
   * The host's `LanguageModel` decorated so every call is recorded, plus the `AiRecorder` itself
   * (for `turn` and `recordToolkit`). Needs the underlying `LanguageModel` and `SessionMemory`.
   *
   * **Gotchas**: persistence failures of a decorated call reach the caller as a defect carrying
   * the store's typed error (the `LanguageModel` interface fixes its error channel); inside
   * `recorder.turn` they are typed failures again (`isAppendError` recognises them). With
   * `onPersistenceError: "log"` they are logged and the call continues.
   */
  static readonly layerLanguageModel = (
    options: AiRecorderOptions = {}
  ): Layer.Layer<LanguageModel.LanguageModel | AiRecorder, StoreIoError, LanguageModel.LanguageModel | SessionMemory> =>
    Layer.effect(
      LanguageModel.LanguageModel,
      Effect.gen(function*() {
        const model = yield* LanguageModel.LanguageModel
        const recorder = yield* AiRecorder
        return recorder.decorate(model)
      })
    ).pipe(Layer.provideMerge(AiRecorder.layer(options)))
}
