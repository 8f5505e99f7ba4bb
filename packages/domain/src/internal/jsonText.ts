/**
 * Total (non-throwing) helpers for turning raw line bytes into JSON values, matching how the
 * reference reads a line: strict UTF-8, Rust `str::trim` whitespace, then a JSON parse.
 */
import { Result, Schema, SchemaIssue, UndefinedOr } from "effect"

// `ignoreBOM: true` keeps a leading U+FEFF in the text: the reference neither strips it nor
// counts it as whitespace, so such a line fails to parse there and must fail here too.
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })

/** Decodes strict UTF-8; `undefined` when the bytes are not valid UTF-8. */
export const decodeUtf8: (bytes: Uint8Array) => string | undefined = UndefinedOr.liftThrowable((bytes: Uint8Array) =>
  utf8.decode(bytes)
)

// Unicode White_Space, which is what Rust's `char::is_whitespace` (and so `str::trim`)
// tests. JavaScript's own `trim` differs: it also strips U+FEFF and does not strip U+0085.
const WS = "\\t\\n\\v\\f\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000"
const LEADING = new RegExp(`^[${WS}]+`)
const TRAILING = new RegExp(`[${WS}]+$`)

const isPlainEdge = (code: number): boolean => code > 0x20 && code < 0x7f

/** Trims leading and trailing Unicode White_Space (Rust `str::trim` semantics). */
export const trimWhitespace = (text: string): string => {
  if (text.length === 0) return text
  // Fast path: an ordinary JSON line starts with `{` and ends with `}`, maybe followed by its `\n`.
  let end = text.length
  if (text.charCodeAt(end - 1) === 10) end--
  if (end > 0 && isPlainEdge(text.charCodeAt(0)) && isPlainEdge(text.charCodeAt(end - 1))) {
    return end === text.length ? text : text.slice(0, end)
  }
  return text.replace(LEADING, "").replace(TRAILING, "")
}

/** Parses JSON text; `undefined` when it is not valid JSON (`JSON.parse` never yields `undefined`). */
export const parseJsonOrUndefined: (text: string) => unknown = UndefinedOr.liftThrowable((text: string): unknown =>
  JSON.parse(text)
)

const describe = (error: unknown): string => error instanceof Error ? error.message : String(error)

/**
 * Parses JSON text into a `Result`, reporting invalid JSON as a `SchemaError` carrying the
 * parser's message (the input itself is not echoed: lines can be megabytes of tool output).
 */
export const parseJsonText = (text: string): Result.Result<unknown, Schema.SchemaError> =>
  Result.try({
    try: (): unknown => JSON.parse(text),
    catch: (error) =>
      new Schema.SchemaError(new SchemaIssue.InvalidValue({ message: `Expected JSON text: ${describe(error)}` }))
  })

/** A JSON object (not an array, not `null`). */
export const isJsonObject = (value: unknown): value is { readonly [key: string]: unknown } =>
  typeof value === "object" && value !== null && !Array.isArray(value)
