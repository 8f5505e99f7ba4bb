/**
 * The bounds of every `logbook mcp` result (docs/mcp.md#budgets-and-cursors): a token budget counted as
 * characters / 4, pages cut at that budget, and the opaque cursor that continues a page. A
 * cursor names the tool and the question it continues, so a cursor from another call is refused
 * with a message instead of returning the wrong page.
 */
import { Effect, Result, Schema } from "effect"
import { Buffer } from "node:buffer"

/** Default `max_tokens` of a result. */
export const DEFAULT_MAX_TOKENS = 4000

/** Smallest `max_tokens` a call may ask for. */
export const MIN_MAX_TOKENS = 500

/** Largest `max_tokens` a call may ask for. */
export const MAX_MAX_TOKENS = 32_000

/** Characters a token stands for in the budget (a conservative average for English text and JSON). */
export const CHARS_PER_TOKEN = 4

/** Longest single text field of an item (command output, a message) before it is trimmed. */
export const ITEM_TEXT_LIMIT = 1200

/** A tool call that cannot be answered as asked: the message says what to change. */
export class McpToolError extends Schema.TaggedError<McpToolError>()("McpToolError", {
  message: Schema.String
}) {}

/** Checks an integer argument against its range; the message names the argument and the range. */
export const intArgument = (
  name: string,
  value: number | undefined,
  fallback: number,
  min: number,
  max: number
): Effect.Effect<number, McpToolError> => {
  const n = value ?? fallback
  return Number.isSafeInteger(n) && n >= min && n <= max
    ? Effect.succeed(n)
    : Effect.fail(new McpToolError({ message: `${name} must be an integer from ${min} to ${max}, got ${n}` }))
}

/** The character budget of a call from its `max_tokens` argument. */
export const budgetChars = (maxTokens: number | undefined): Effect.Effect<number, McpToolError> =>
  Effect.map(
    intArgument("max_tokens", maxTokens, DEFAULT_MAX_TOKENS, MIN_MAX_TOKENS, MAX_MAX_TOKENS),
    (n) => n * CHARS_PER_TOKEN
  )

/** Trims a text to `limit` characters, saying how much was cut. */
export const trimText = (text: string, limit: number = ITEM_TEXT_LIMIT): string =>
  text.length <= limit ? text : `${text.slice(0, limit)}… [${text.length - limit} more characters]`

const CursorJson = Schema.fromJsonString(Schema.Struct({
  tool: Schema.String,
  key: Schema.String,
  at: Schema.Int,
  now: Schema.optionalKey(Schema.Int)
}))

/** What a cursor carries: the tool, the question it continues, where the next page starts. */
export type CursorState = typeof CursorJson.Type

/** Encodes a cursor (base64url JSON; opaque to clients). */
export const encodeCursor = (state: CursorState): string =>
  Buffer.from(Schema.encodeSync(CursorJson)(state), "utf8").toString("base64url")

/**
 * Decodes the cursor of `tool` for the question `key`: none when absent; a tool error when it is
 * malformed, from another tool or another question.
 */
export const decodeCursor = (
  tool: string,
  key: string,
  cursor: string | undefined
): Effect.Effect<CursorState | undefined, McpToolError> => {
  if (cursor === undefined || cursor === "") return Effect.succeed(undefined)
  const refuse = (why: string) =>
    Effect.fail(
      new McpToolError({
        message: `invalid cursor (${why}); pass the cursor of the previous ${tool} result unchanged, ` +
          "with the same other arguments (max_tokens may change), or omit it to start from the beginning"
      })
    )
  if (cursor.length > 2048 || !/^[A-Za-z0-9_-]+$/u.test(cursor)) return refuse("not a cursor this server issued")
  const decoded = Schema.decodeUnknownResult(CursorJson)(Buffer.from(cursor, "base64url").toString("utf8"))
  if (Result.isFailure(decoded)) return refuse("not a cursor this server issued")
  const state = decoded.success
  if (state.tool !== tool) return refuse(`it continues ${state.tool}, not ${tool}`)
  if (state.key !== key) return refuse("it continues a call with other arguments")
  if (state.at < 0) return refuse("negative position")
  return Effect.succeed(state)
}

/** The size an item counts against the budget: its JSON length. */
export const jsonSize = (value: unknown): number => JSON.stringify(value).length

/**
 * One page of `items` from `start`: as many as fit in `budget` characters, at least one (an item
 * is trimmed before it is paged, so one always fits); `next` is where the following page starts,
 * or none at the end.
 */
export const pageItems = <A>(
  items: ReadonlyArray<A>,
  start: number,
  budget: number,
  size: (a: A) => number = jsonSize
): { readonly items: ReadonlyArray<A>; readonly next: number | undefined } => {
  const page: Array<A> = []
  let used = 0
  let at = start
  while (at < items.length) {
    const item = items[at]
    if (item === undefined) break
    const n = size(item)
    if (page.length > 0 && used + n > budget) break
    page.push(item)
    used += n
    at += 1
  }
  return { items: page, next: at < items.length ? at : undefined }
}

/** One page of a text: as many characters from `start` as fit in `budget` once JSON-escaped; `next` is where the following page starts. */
export const pageText = (
  text: string,
  start: number,
  budget: number
): { readonly text: string; readonly next: number | undefined; readonly total: number } => {
  let end = Math.min(text.length, start + budget)
  // Escapes (quotes, newlines, controls) lengthen the text in JSON: shrink until the JSON fits.
  for (
    let size = jsonSize(text.slice(start, end));
    size > budget && end > start + 1;
    size = jsonSize(text.slice(start, end))
  ) {
    end = start + Math.max(1, Math.floor(((end - start) * budget) / size) - 1)
  }
  return { text: text.slice(start, end), next: end < text.length ? end : undefined, total: text.length }
}
