/**
 * Reading foreign JSONL session files line by line (docs/import.md#tolerance): each raw line
 * becomes the JSON records it holds, or the reason it holds none. CRLF endings, blank lines,
 * `#` comment lines (for `codex exec --json` captures), invalid UTF-8 (replaced, and said so) and
 * two JSON objects written on one line (split, both kept) are handled here, so the mappers only
 * ever see parsed records.
 */
import { exceedsJsonDepth, MAX_JSON_DEPTH } from "@logbook/domain"
import { Result } from "effect"

/** What one foreign line holds. */
export type ForeignLine =
  | {
    readonly _tag: "Records"
    readonly values: ReadonlyArray<unknown>
    readonly split: boolean
    readonly replaced: boolean
  }
  | { readonly _tag: "Blank" }
  | { readonly _tag: "Comment" }
  | { readonly _tag: "Bad"; readonly reason: string }

const strict = new TextDecoder("utf-8", { fatal: true })
const lenient = new TextDecoder("utf-8")

// Parsing is iterative but the mappers and the import digest recurse: a record nested deeper than
// MAX_JSON_DEPTH would overflow the stack there, so it is a bad line here.
const parse = (text: string): Result.Result<unknown, string> =>
  exceedsJsonDepth(text)
    ? Result.fail(`JSON nested deeper than ${MAX_JSON_DEPTH} levels`)
    : Result.try({
      try: (): unknown => JSON.parse(text),
      catch: (error) => (error instanceof Error ? error.message : String(error))
    })

/**
 * Splits text holding several top-level JSON objects or arrays written back to back
 * (`{…}{…}`) at their boundaries; undefined when it is not such a sequence.
 */
export const splitConcatenatedJson = (text: string): ReadonlyArray<string> | undefined => {
  const pieces: Array<string> = []
  let depth = 0
  let inString = false
  let escaped = false
  let start = -1
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i)
    if (inString) {
      if (escaped) escaped = false
      else if (ch === 92) escaped = true
      else if (ch === 34) inString = false
      continue
    }
    if (ch === 34) {
      inString = true
    } else if (ch === 123 || ch === 91) {
      if (depth === 0) start = i
      depth++
    } else if (ch === 125 || ch === 93) {
      depth--
      if (depth < 0) return undefined
      if (depth === 0) pieces.push(text.slice(start, i + 1))
    } else if (depth === 0 && ch !== 32 && ch !== 9 && ch !== 13 && ch !== 10) {
      return undefined
    }
  }
  return depth === 0 && !inString && pieces.length > 1 ? pieces : undefined
}

/** Parses one raw line (its bytes, `\n` included or not). `comments`: `#` lines are comments. */
export const parseForeignLine = (bytes: Uint8Array, comments: boolean): ForeignLine => {
  const decoded = Result.try(() => strict.decode(bytes))
  const replaced = Result.isFailure(decoded)
  const text = (Result.isSuccess(decoded) ? decoded.success : lenient.decode(bytes)).trim()
  if (text.length === 0) return { _tag: "Blank" }
  if (comments && text.startsWith("#")) return { _tag: "Comment" }
  const whole = parse(text)
  if (Result.isSuccess(whole)) return { _tag: "Records", values: [whole.success], split: false, replaced }
  const pieces = splitConcatenatedJson(text)
  if (pieces !== undefined) {
    const values: Array<unknown> = []
    for (const piece of pieces) {
      const value = parse(piece)
      if (Result.isFailure(value)) return { _tag: "Bad", reason: `not JSON (${whole.failure})` }
      values.push(value.success)
    }
    return { _tag: "Records", values, split: true, replaced }
  }
  return { _tag: "Bad", reason: `not JSON (${whole.failure.slice(0, 200)})` }
}
