/**
 * The stored text of an event, for showing one whose counts JavaScript cannot hold exactly. A
 * log line may carry a u64 count beyond 2^53 − 1 (docs/format-notes.md#u64-counts): parsing it
 * keeps only the nearest double, so re-encoding the parsed event would print another number than
 * the file holds. The line's bytes are exact, so such an event is shown as the line stores it:
 * the text of the envelope's top-level `event` member, cut out of the line by a small iterative
 * scanner (no recursion, so any nesting depth is fine).
 *
 * **Gotchas**: the stored text is the writer's, not the canonical encoding (key order and extra
 * fields as written); it is used only when the canonical encoding cannot be exact.
 */
import { Result } from "effect"
import { encodeEvent } from "./Encode.ts"
import type { ThreadEvent } from "./ThreadEvent.ts"

const DIGIT_0 = 48
const DIGIT_9 = 57
/** 2^53 has 16 digits: a count with fewer is always exact. */
const UNSAFE_DIGITS = 16

const isSpace = (c: string | undefined): boolean => c === " " || c === "\t" || c === "\n" || c === "\r"

const skipSpace = (text: string, at: number): number => {
  let i = at
  while (isSpace(text[i])) i++
  return i
}

/** The index after the string literal opening at `at` (a `"`), or -1 when it does not end. */
const stringEnd = (text: string, at: number): number => {
  for (let i = at + 1; i < text.length; i++) {
    const c = text[i]
    if (c === "\\") i++
    else if (c === "\"") return i + 1
  }
  return -1
}

/** The index after the JSON value starting at `at`, or -1 when it does not end. */
const valueEnd = (text: string, at: number): number => {
  const first = text[at]
  if (first === "\"") return stringEnd(text, at)
  if (first === "{" || first === "[") {
    let depth = 0
    for (let i = at; i < text.length; i++) {
      const c = text[i]
      if (c === "\"") {
        const end = stringEnd(text, i)
        if (end < 0) return -1
        i = end - 1
      } else if (c === "{" || c === "[") {
        depth++
      } else if (c === "}" || c === "]") {
        depth--
        if (depth === 0) return i + 1
      }
    }
    return -1
  }
  let i = at
  while (i < text.length && !isSpace(text[i]) && text[i] !== "," && text[i] !== "}" && text[i] !== "]") i++
  return i > at ? i : -1
}

const keyOf = (literal: string): string | undefined => {
  const parsed = Result.try(() => JSON.parse(literal) as unknown)
  return Result.isSuccess(parsed) && typeof parsed.success === "string" ? parsed.success : undefined
}

/**
 * The exact text of the last top-level `key` member of the JSON object `text` (as `JSON.parse`
 * reads duplicate keys: the last one wins), or `undefined` when `text` is not such an object.
 */
export const memberText = (text: string, key: string): string | undefined => {
  let i = skipSpace(text, 0)
  if (text[i] !== "{") return undefined
  i = skipSpace(text, i + 1)
  if (text[i] === "}") return undefined
  let found: string | undefined
  for (;;) {
    if (text[i] !== "\"") return undefined
    const keyEnd = stringEnd(text, i)
    if (keyEnd < 0) return undefined
    const name = keyOf(text.slice(i, keyEnd))
    i = skipSpace(text, keyEnd)
    if (text[i] !== ":") return undefined
    const start = skipSpace(text, i + 1)
    const end = valueEnd(text, start)
    if (end < 0) return undefined
    if (name === key) found = text.slice(start, end)
    i = skipSpace(text, end)
    if (text[i] === "}") return found
    if (text[i] !== ",") return undefined
    i = skipSpace(text, i + 1)
  }
}

/** Whether `bytes` hold a run of at least 16 digits (a number that may be beyond 2^53 − 1). */
const hasLongDigitRun = (bytes: Uint8Array): boolean => {
  let run = 0
  // An indexed loop: iterating a Uint8Array with `for…of` costs several times as much (hot: every line read).
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i] ?? 0
    if (b >= DIGIT_0 && b <= DIGIT_9) {
      run++
      if (run >= UNSAFE_DIGITS) return true
    } else {
      run = 0
    }
  }
  return false
}

/**
 * The text to show for `event`, decoded from the log line `line`, when its canonical encoding
 * cannot be exact (a count beyond 2^53 − 1): the line's own `event` member, digits as stored.
 * `undefined` when the canonical encoding is exact (nearly always: the check is one pass over
 * the bytes looking for a 16-digit run) or the member cannot be found.
 */
export const exactStoredEventText = (event: ThreadEvent, line: Uint8Array): string | undefined => {
  if (!hasLongDigitRun(line)) return undefined
  if (Result.isSuccess(Result.try(() => encodeEvent(event)))) return undefined
  return memberText(new TextDecoder().decode(line), "event")
}
