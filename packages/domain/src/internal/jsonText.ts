/**
 * Total (non-throwing) helpers for turning raw line bytes into JSON values, matching how the
 * reference reads a line: strict UTF-8, Rust `str::trim` whitespace, then a JSON parse.
 */
import { Predicate, Result, Schema, SchemaIssue, UndefinedOr } from "effect"

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

/**
 * How deeply JSON read from disk may nest (arrays and objects) before readers refuse it. Parsing is
 * iterative, but everything after it — Schema decoding, `JSON.stringify`, the mappers' walks — recurses,
 * and a hostile line of 100 000 levels overflows the stack (a crash, not an error). A thousand levels
 * is far beyond any real event or session file and well within the stack of every recursive reader.
 */
export const MAX_JSON_DEPTH = 1000

/**
 * Whether JSON `text` nests arrays and objects deeper than `max` levels (brackets inside strings do
 * not count). O(length), native `indexOf` over string contents; text of at most `2 × max` characters
 * cannot nest that deep and is not scanned. Invalid JSON gives some answer, never a throw.
 */
export const exceedsJsonDepth = (text: string, max: number = MAX_JSON_DEPTH): boolean => {
  if (text.length <= 2 * max) return false
  let depth = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 34) {
      i = stringEnd(text, i)
      if (i === -1) return false
    } else if (c === 123 || c === 91) {
      depth++
      if (depth > max) return true
    } else if (c === 125 || c === 93) {
      depth--
    }
  }
  return false
}

/** Index of the quote closing the JSON string that opens at `open`, or -1 when it never closes. */
const stringEnd = (text: string, open: number): number => {
  for (let from = open + 1;;) {
    const quote = text.indexOf("\"", from)
    if (quote === -1) return -1
    let backslashes = 0
    while (text.charCodeAt(quote - 1 - backslashes) === 92) backslashes++
    if (backslashes % 2 === 0) return quote
    from = quote + 1
  }
}

/** The error readers report for JSON nested deeper than {@link MAX_JSON_DEPTH}. */
const tooDeep = (): SyntaxError => new SyntaxError(`JSON nested deeper than ${MAX_JSON_DEPTH} levels`)

// 2^64: u64's maximum and every literal a little above it (up to 2^64 + 2048) parse to this double.
const TWO_POW_64 = 2 ** 64
// The first double above 2^64: what a literal above u64's maximum becomes, so a u64 field rejects it.
const ABOVE_U64 = 2 ** 64 + 4096
const U64_MAX = 18446744073709551615n
const NUMBER_SOURCE = /^(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/u
// Any literal whose value rounds to 2^64 has an integer part of 11+ digits or a 2-digit exponent.
const MAY_ROUND_TO_TWO_POW_64 = /\d{11}|[eE]\+?\d{2}/u

/** Whether a non-negative JSON number literal denotes a value above u64's maximum, exactly. */
const exceedsU64Max = (source: string): boolean => {
  const match = NUMBER_SOURCE.exec(source)
  if (match === null) return false
  const fraction = match[2] ?? ""
  const digits = BigInt(`${match[1] ?? "0"}${fraction}`)
  const exponent = Number(match[3] ?? "0") - fraction.length
  return exponent >= 0 ? digits * 10n ** BigInt(exponent) > U64_MAX : digits > U64_MAX * 10n ** BigInt(-exponent)
}

// JSON.parse's reviver sees each primitive's source text (Node ≥ 21); without it nothing changes.
const u64Reviver = (_key: string, value: unknown, context?: { readonly source?: string }): unknown =>
  value === TWO_POW_64 && context?.source !== undefined && exceedsU64Max(context.source) ? ABOVE_U64 : value

/**
 * `JSON.parse`, except that a number literal above u64's maximum (18446744073709551615) yet close
 * enough to parse to the same double (2^64) parses to the next double instead, so a u64 field
 * refuses it as VT Code does while any other number field keeps a value within one ulp. Only
 * lines that could hold such a literal pay for the source-aware parse. Throws like `JSON.parse`,
 * and a `SyntaxError` for text nested deeper than {@link MAX_JSON_DEPTH}.
 */
export const parseJsonExact = (text: string): unknown => {
  if (exceedsJsonDepth(text)) throw tooDeep()
  return exactJsonValue(text, JSON.parse(text))
}

/**
 * Whether a parsed JSON value holds the number 2^64 anywhere: only then can the source-aware parse
 * give another value (its reviver changes nothing else). Iterative, and a walk over the values —
 * far cheaper than a scan of the text, whose strings (tool output) are most of its length.
 */
const holdsTwoPow64 = (value: unknown): boolean => {
  const stack: Array<unknown> = [value]
  while (stack.length > 0) {
    const v = stack.pop()
    if (v === TWO_POW_64) return true
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) stack.push(v[i])
    } else if (Predicate.isReadonlyObject(v)) {
      for (const key of Object.keys(v)) stack.push(v[key])
    }
  }
  return false
}

/**
 * `parsed` (the plain `JSON.parse` of `text`) as {@link parseJsonExact} would have parsed it:
 * the same value unless `text` may hold a literal above u64's maximum, then parsed again. For
 * readers that parse every line cheaply and fully decode only a few of them.
 */
export const exactJsonValue = (text: string, parsed: unknown): unknown =>
  holdsTwoPow64(parsed) && MAY_ROUND_TO_TWO_POW_64.test(text) ? JSON.parse(text, u64Reviver) : parsed

const describe = (error: unknown): string => error instanceof Error ? error.message : String(error)

/**
 * Parses JSON text into a `Result` with {@link parseJsonExact}, reporting invalid JSON as a
 * `SchemaError` carrying the parser's message (the input itself is not echoed: lines can be
 * megabytes of tool output).
 */
export const parseJsonText = (text: string): Result.Result<unknown, Schema.SchemaError> =>
  Result.try({
    try: (): unknown => parseJsonExact(text),
    catch: (error) =>
      new Schema.SchemaError(new SchemaIssue.InvalidValue({ message: `Expected JSON text: ${describe(error)}` }))
  })

/** A JSON object (not an array, not `null`). */
export const isJsonObject: (value: unknown) => value is { readonly [key: string]: unknown } = Predicate.isReadonlyObject
