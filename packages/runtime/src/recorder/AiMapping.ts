/**
 * The pure half of the effect/ai recorder (docs/embedding.md#mapping): how a `Prompt` is read
 * (does it open a turn, what is its goal) and how `Response` parts — whole parts from
 * `generateText` / `generateObject` or stream parts from `streamText` — become ThreadItems.
 * The mapper is a small state machine fed one part at a time: text and reasoning items complete
 * when their part ends, tool calls stay open until their result arrives (in the same response,
 * or in a later prompt's tool message when the host resolves tools itself).
 */
import type { FileChangeItem, ThreadItem, UsageTotals } from "@logbook/domain"
import { addUsage, zeroUsage } from "@logbook/domain"
import type { Prompt, Response } from "effect/ai"

/** How the host marks one tool: a shell-like command, a file edit, or a plain tool (default). */
export type ToolKind =
  | { readonly kind: "command"; readonly command?: ((params: unknown) => string) | undefined }
  | { readonly kind: "file"; readonly paths?: ((params: unknown) => ReadonlyArray<string>) | undefined }

/** Tool kinds by tool name; tools not listed are recorded as `tool_invocation` / `tool_output` only. */
export type ToolKinds = Readonly<Record<string, ToolKind>>

/** What a prompt means for turn delimiting (see {@link classifyPrompt}). */
export type PromptShape = "user" | "tool" | "other"

/**
 * Whether the prompt ends with a new user message (`user`: a new turn), with tool results
 * (`tool`: a follow-up round of the same agent loop), or with anything else (`other`).
 */
export const classifyPrompt = (prompt: Prompt.Prompt): PromptShape => {
  const last = prompt.content[prompt.content.length - 1]
  if (last === undefined) return "other"
  if (last.role === "user") return "user"
  if (last.role === "tool") return "tool"
  return "other"
}

/** The text of the last user message of a prompt ("" when there is none): a turn's goal. */
export const promptGoal = (prompt: Prompt.Prompt): string => {
  for (let i = prompt.content.length - 1; i >= 0; i--) {
    const message = prompt.content[i]
    if (message !== undefined && message.role === "user") {
      return message.content.flatMap((part) => part.type === "text" ? [part.text] : []).join("")
    }
  }
  return ""
}

/** The tool results a prompt ends with (its trailing tool message), for calls resolved by the host. */
export const trailingToolResults = (prompt: Prompt.Prompt): ReadonlyArray<Prompt.ToolResultPart> => {
  const last = prompt.content[prompt.content.length - 1]
  if (last === undefined || last.role !== "tool") return []
  return last.content.flatMap((part) => part.type === "tool-result" ? [part] : [])
}

const count = (n: number | undefined): number => n === undefined || !Number.isFinite(n) || n < 0 ? 0 : Math.trunc(n)

/** The contract's usage counters of one provider response (missing counters read as 0). */
export const usageOf = (usage: Response.Usage): UsageTotals => {
  const input = count(usage.inputTokens.total)
  const cached = count(usage.inputTokens.cacheRead)
  return {
    input_tokens: input,
    cached_input_tokens: cached,
    cache_creation_tokens: count(usage.inputTokens.cacheWrite),
    output_tokens: count(usage.outputTokens.total)
  }
}

/** JSON text of a value, `String(value)` when it has none (undefined, functions, cycles). */
export const jsonText = (value: unknown): string => {
  if (typeof value === "string") return value
  const text = safeStringify(value)
  return text ?? String(value)
}

const safeStringify = (value: unknown): string | undefined => {
  const seen = new WeakSet<object>()
  const text: unknown = JSON.stringify(value, (_key, v: unknown) => {
    if (typeof v === "bigint") return v.toString()
    if (typeof v === "object" && v !== null) {
      if (seen.has(v)) return undefined
      seen.add(v)
    }
    return v
  })
  return typeof text === "string" ? text : undefined
}

/** A JSON value for `arguments` fields: the value's JSON round trip (undefined when it has none). */
export const jsonValue = (value: unknown): JsonValue | undefined => {
  const text = safeStringify(value)
  if (text === undefined) return undefined
  const parsed: JsonValue = JSON.parse(text)
  return parsed
}

/** A JSON value. */
export type JsonValue = string | number | boolean | null | ReadonlyArray<JsonValue> | {
  readonly [k: string]: JsonValue
}

const field = (value: unknown, key: string): unknown =>
  typeof value === "object" && value !== null && Object.hasOwn(value, key)
    ? Reflect.get(value, key)
    : undefined

const exitCodeOf = (result: unknown, isFailure: boolean): number => {
  for (const key of ["exitCode", "exit_code", "code"]) {
    const value = field(result, key)
    if (typeof value === "number" && Number.isInteger(value)) return value
  }
  return isFailure ? 1 : 0
}

const outputOf = (result: unknown): string => {
  for (const key of ["output", "stdout"]) {
    const value = field(result, key)
    if (typeof value === "string") return value
  }
  return jsonText(result)
}

const defaultCommand = (params: unknown): string => {
  const value = field(params, "command") ?? field(params, "cmd")
  return typeof value === "string" ? value : jsonText(params)
}

const defaultPaths = (params: unknown): ReadonlyArray<string> => {
  const value = field(params, "path") ?? field(params, "file")
  return typeof value === "string" ? [value] : []
}

/** One tool call as the recorder saw it. */
export interface ToolCallRecord {
  readonly callId: string
  readonly name: string
  readonly params: unknown
}

/** One tool result as the recorder saw it. */
export interface ToolResultRecord {
  readonly callId: string
  readonly name: string
  readonly result: unknown
  readonly isFailure: boolean
}

/** Item ids of a tool call: derived from the turn key and the provider's call id. */
export const toolItemIds = (turnKey: string, callId: string) => ({
  invocation: `${turnKey}-tool-${callId}`,
  output: `${turnKey}-out-${callId}`,
  command: `${turnKey}-cmd-${callId}`,
  file: `${turnKey}-fc-${callId}`,
  latency: `${turnKey}-lat-${callId}`
})

/** The `tool_invocation` item of a call, open (`in_progress`) until its result is known. */
export const invocationItem = (turnKey: string, call: ToolCallRecord, result?: ToolResultRecord): ThreadItem => {
  const args = jsonValue(call.params)
  return {
    id: toolItemIds(turnKey, call.callId).invocation,
    type: "tool_invocation",
    tool_name: call.name,
    ...(args === undefined ? {} : { arguments: args }),
    tool_call_id: call.callId,
    status: result === undefined ? "in_progress" : result.isFailure ? "failed" : "completed",
    ...(result === undefined ? {} : { outcome: result.isFailure ? "error" : "success" })
  }
}

/**
 * The items completing a tool call: the closed `tool_invocation`, its `tool_output` (`call_id` =
 * the invocation item's id, `tool_call_id` = the provider's call id, `output` = the result's
 * JSON), and for tools the host marked, a `command_execution` (command, output, exit code read
 * from `exitCode` / `exit_code` / `code`; `failed` when non-zero) or a `file_change` (the edited paths).
 */
export const resultItems = (
  turnKey: string,
  call: ToolCallRecord,
  result: ToolResultRecord,
  kinds: ToolKinds
): ReadonlyArray<ThreadItem> => {
  const ids = toolItemIds(turnKey, call.callId)
  const status = result.isFailure ? "failed" : "completed"
  const items: Array<ThreadItem> = [
    invocationItem(turnKey, call, result),
    {
      id: ids.output,
      type: "tool_output",
      call_id: ids.invocation,
      tool_call_id: call.callId,
      output: jsonText(result.result),
      status
    }
  ]
  const kind = Object.hasOwn(kinds, call.name) ? kinds[call.name] : undefined
  if (kind?.kind === "command") {
    const args = jsonValue(call.params)
    const exitCode = exitCodeOf(result.result, result.isFailure)
    items.push({
      id: ids.command,
      type: "command_execution",
      command: (kind.command ?? defaultCommand)(call.params),
      ...(args === undefined ? {} : { arguments: args }),
      aggregated_output: outputOf(result.result),
      exit_code: exitCode,
      status: exitCode === 0 && !result.isFailure ? "completed" : "failed"
    })
  } else if (kind?.kind === "file") {
    const change: FileChangeItem = {
      id: ids.file,
      type: "file_change",
      changes: (kind.paths ?? defaultPaths)(call.params).map((path) => ({ path, kind: "update" as const })),
      status
    }
    items.push(change)
  }
  return items
}

/** The mapper's state over one call's response parts. */
export interface MapperState {
  /** Prefix of the item ids of the current turn (`t<turn>`). */
  readonly turnKey: string
  /** Sequence of this call within its turn, so ids of two calls never collide. */
  readonly call: number
  /** Next item number within this call. */
  readonly next: number
  /** Streamed text / reasoning by part id, completed on `*-end`. */
  readonly open: ReadonlyMap<string, { readonly kind: "text" | "reasoning"; readonly text: string }>
  /** Tool calls awaiting their result. */
  readonly calls: ReadonlyMap<string, ToolCallRecord>
  /** Usage summed over this call's finish parts. */
  readonly usage: UsageTotals
  /** Whether a finish part was seen, and its reason. */
  readonly finish: string | undefined
  /** Tool calls this response asked for (resolved or not). */
  readonly toolCalls: number
}

/** A fresh mapper for call `call` of the turn `turnKey`, knowing the calls still open in the turn. */
export const initialMapper = (
  turnKey: string,
  call: number,
  calls: ReadonlyMap<string, ToolCallRecord> = new Map()
): MapperState => ({
  turnKey,
  call,
  next: 0,
  open: new Map(),
  calls,
  usage: zeroUsage,
  finish: undefined,
  toolCalls: 0
})

/** One step of the mapper: the new state and the items that part completed. */
export interface MapperStep {
  readonly state: MapperState
  readonly items: ReadonlyArray<ThreadItem>
}

const itemId = (state: MapperState, kind: string): [string, MapperState] => [
  `${state.turnKey}-c${state.call}-${kind}-${state.next}`,
  { ...state, next: state.next + 1 }
]

const textItem = (state: MapperState, kind: "text" | "reasoning", text: string): MapperStep => {
  const [id, next] = itemId(state, kind === "text" ? "msg" : "rsn")
  return {
    state: next,
    items: [kind === "text" ? { id, type: "agent_message", text } : { id, type: "reasoning", text }]
  }
}

const errorMessage = (error: unknown): string =>
  error instanceof Error ? error.message : typeof error === "string" ? error : jsonText(error)

/**
 * Feeds one response part (whole or streamed) to the mapper. `text` / `reasoning` complete
 * at once; `*-start` / `*-delta` accumulate and `*-end` completes; `tool-call` opens a call;
 * a final `tool-result` closes it; `error` becomes an `error` item; `finish` adds its usage.
 * Other parts (metadata, sources, files, tool parameter deltas, approvals) record nothing.
 *
 * **Gotchas**: preliminary tool results are skipped; a result whose call was not seen still
 * records its output (with the call rebuilt from the result's name, no arguments).
 */
export const stepMapper = (state: MapperState, part: Response.AnyPart, kinds: ToolKinds): MapperStep => {
  switch (part.type) {
    case "text":
      return part.text.length === 0 ? { state, items: [] } : textItem(state, "text", part.text)
    case "reasoning":
      return part.text.length === 0 ? { state, items: [] } : textItem(state, "reasoning", part.text)
    case "text-start":
    case "reasoning-start": {
      const open = new Map(state.open)
      open.set(part.id, { kind: part.type === "text-start" ? "text" : "reasoning", text: "" })
      return { state: { ...state, open }, items: [] }
    }
    case "text-delta":
    case "reasoning-delta": {
      const current = state.open.get(part.id)
      const open = new Map(state.open)
      open.set(part.id, {
        kind: current?.kind ?? (part.type === "text-delta" ? "text" : "reasoning"),
        text: (current?.text ?? "") + part.delta
      })
      return { state: { ...state, open }, items: [] }
    }
    case "text-end":
    case "reasoning-end": {
      const current = state.open.get(part.id)
      if (current === undefined) return { state, items: [] }
      const open = new Map(state.open)
      open.delete(part.id)
      const closed = { ...state, open }
      return current.text.length === 0 ? { state: closed, items: [] } : textItem(closed, current.kind, current.text)
    }
    case "tool-call": {
      const call: ToolCallRecord = { callId: part.id, name: part.name, params: part.params }
      const calls = new Map(state.calls)
      calls.set(part.id, call)
      return {
        state: { ...state, calls, toolCalls: state.toolCalls + 1 },
        items: [invocationItem(state.turnKey, call)]
      }
    }
    case "tool-result": {
      if (part.preliminary) return { state, items: [] }
      const call = state.calls.get(part.id) ?? { callId: part.id, name: part.name, params: undefined }
      const calls = new Map(state.calls)
      calls.delete(part.id)
      const result: ToolResultRecord = {
        callId: part.id,
        name: part.name,
        result: part.encodedResult ?? part.result,
        isFailure: part.isFailure
      }
      return { state: { ...state, calls }, items: resultItems(state.turnKey, call, result, kinds) }
    }
    case "error": {
      const [id, next] = itemId(state, "err")
      return { state: next, items: [{ id, type: "error", message: errorMessage(part.error) }] }
    }
    case "finish":
      return { state: { ...state, usage: addUsage(state.usage, usageOf(part.usage)), finish: part.reason }, items: [] }
    default:
      return { state, items: [] }
  }
}

/** Maps a whole response's parts in order: the final state and every item they completed. */
export const mapParts = (state: MapperState, parts: ReadonlyArray<Response.AnyPart>, kinds: ToolKinds): MapperStep => {
  let current = state
  const items: Array<ThreadItem> = []
  for (const part of parts) {
    const step = stepMapper(current, part, kinds)
    current = step.state
    items.push(...step.items)
  }
  return { state: current, items }
}

/**
 * Whether a response ends its turn: it asked for no tool call (a final answer), so the agent
 * loop has no tool results to send back in a follow-up round.
 */
export const endsTurn = (state: MapperState): boolean => state.toolCalls === 0
