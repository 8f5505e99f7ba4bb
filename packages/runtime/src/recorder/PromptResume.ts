/**
 * Resume (docs/embedding.md#resume): rebuilds an effect/ai `Prompt` — the conversation so far —
 * from a recorded session, so a host can continue after a restart. Each turn becomes its user
 * message (the turn's goal), then alternating assistant messages (reasoning, text, tool calls)
 * and tool messages (the calls' results), the shape `Prompt.fromResponseParts` gives a loop's
 * history. The newest turns are kept first within a token budget (estimated as characters / 4).
 */
import type { ThreadEvent, ThreadItem } from "@logbook/domain"
import { findSession, readEventRecords } from "@logbook/projections"
import { Effect, Result, Stream } from "effect"
import { Prompt } from "effect/ai"

/** Options of {@link resumePrompt}. */
export interface ResumeOptions {
  /** The most tokens the rebuilt history may hold (whole turns only, newest first). */
  readonly budgetTokens: number
  /** Token estimate of a text (default: `ceil(chars / 4)`). */
  readonly estimateTokens?: ((text: string) => number) | undefined
}

/** One recorded turn as messages, with the texts its token estimate counts. */
export interface ResumedTurn {
  readonly messages: ReadonlyArray<Prompt.Message>
  readonly texts: ReadonlyArray<string>
}

/** The default token estimate: a quarter of the characters, rounded up. */
export const estimateTokens = (text: string): number => Math.ceil(text.length / 4)

const safeParse = (output: string): { readonly value: unknown } | undefined => {
  const first = output.trimStart()[0]
  if (first === undefined || !"{[\"tfn-0123456789".includes(first)) return undefined
  const parsed = Result.try({ try: (): unknown => JSON.parse(output), catch: () => undefined })
  return Result.isSuccess(parsed) ? { value: parsed.success } : undefined
}

const resultOf = (output: string): unknown => {
  const parsed = safeParse(output)
  return parsed === undefined ? output : parsed.value
}

interface TurnBuilder {
  readonly goal: string | undefined
  readonly items: Array<ThreadItem>
}

/**
 * The messages of one turn's completed items (pure). Tool calls without a recorded output
 * (cancelled by a failure) are left out, so every tool call of the result has its result.
 */
export const turnMessages = (goal: string | undefined, items: ReadonlyArray<ThreadItem>): ResumedTurn => {
  const messages: Array<Prompt.Message> = []
  const texts: Array<string> = []
  if (goal !== undefined && goal.length > 0) {
    messages.push(Prompt.makeMessage("user", { content: [Prompt.makePart("text", { text: goal })] }))
    texts.push(goal)
  }
  const answered = new Set(items.flatMap((item) => item.type === "tool_output" ? [item.call_id] : []))
  const names = new Map<string, string>()
  let assistant: Array<Prompt.AssistantMessagePart> = []
  let results: Array<Prompt.ToolResultPart> = []
  const flush = () => {
    if (assistant.length > 0) messages.push(Prompt.makeMessage("assistant", { content: assistant }))
    if (results.length > 0) messages.push(Prompt.makeMessage("tool", { content: results }))
    assistant = []
    results = []
  }
  const toAssistant = (part: Prompt.AssistantMessagePart) => {
    if (results.length > 0) flush()
    assistant.push(part)
  }
  for (const item of items) {
    switch (item.type) {
      case "agent_message":
        toAssistant(Prompt.makePart("text", { text: item.text }))
        texts.push(item.text)
        break
      case "reasoning":
        toAssistant(Prompt.makePart("reasoning", { text: item.text }))
        texts.push(item.text)
        break
      case "tool_invocation": {
        if (item.status === "in_progress" || !answered.has(item.id)) break
        const id = item.tool_call_id ?? item.id
        names.set(item.id, item.tool_name)
        toAssistant(Prompt.makePart("tool-call", {
          id,
          name: item.tool_name,
          params: item.arguments ?? {},
          providerExecuted: false
        }))
        texts.push(item.tool_name, JSON.stringify(item.arguments ?? {}))
        break
      }
      case "tool_output": {
        const name = names.get(item.call_id)
        if (name === undefined) break
        results.push(Prompt.makePart("tool-result", {
          id: item.tool_call_id ?? item.call_id,
          name,
          isFailure: item.status === "failed",
          result: resultOf(item.output),
          providerExecuted: false
        }))
        texts.push(item.output)
        break
      }
      default:
        break
    }
  }
  flush()
  return { messages, texts }
}

/**
 * Keeps the newest turns whose estimated tokens fit the budget (stopping at the first that does
 * not, so the kept history is contiguous) and returns them oldest first as one `Prompt`.
 */
export const promptWithinBudget = (turns: ReadonlyArray<ResumedTurn>, options: ResumeOptions): Prompt.Prompt => {
  const estimate = options.estimateTokens ?? estimateTokens
  const kept: Array<ResumedTurn> = []
  let used = 0
  for (let i = turns.length - 1; i >= 0; i--) {
    const turn = turns[i]
    if (turn === undefined) continue
    const cost = turn.texts.reduce((n, text) => n + estimate(text), 0)
    if (used + cost > options.budgetTokens) break
    used += cost
    kept.unshift(turn)
  }
  return Prompt.fromMessages(kept.flatMap((turn) => turn.messages))
}

/** Groups a log's events into turns (goal + completed items); events before the first turn are ignored. */
export const turnsOfEvents = (events: ReadonlyArray<ThreadEvent>): ReadonlyArray<ResumedTurn> => {
  const turns: Array<TurnBuilder> = []
  for (const event of events) {
    if (event.type === "turn.started") turns.push({ goal: event.context?.goal, items: [] })
    else if (event.type === "item.completed") turns[turns.length - 1]?.items.push(event.item)
  }
  return turns.map((turn) => turnMessages(turn.goal, turn.items))
}

/**
 * The conversation recorded in a session as an effect/ai `Prompt`, newest turns first within
 * `budgetTokens`. Reads the retained log as a stream (turns evicted by the cap are gone).
 *
 * **Gotchas**: the retained events are held while the turns are grouped (the budget is applied
 * newest first afterwards). A tool output that is valid JSON is resumed as the parsed value (the recorder
 * wrote `encodedResult` as JSON), so a string result that itself looks like JSON comes back parsed.
 */
export const resumePrompt = Effect.fn("Recorder.resumePrompt")(
  function*(sessionsDir: string, sessionId: string, options: ResumeOptions) {
    const paths = yield* findSession(sessionsDir, sessionId)
    const events = yield* readEventRecords(paths.events).pipe(
      Stream.runFold((): Array<ThreadEvent> => [], (acc, record) => {
        if (record._tag === "Event") acc.push(record.event)
        return acc
      })
    )
    return promptWithinBudget(turnsOfEvents(events), options)
  }
)
