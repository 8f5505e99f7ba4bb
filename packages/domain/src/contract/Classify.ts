/**
 * Scan-time classification of one raw line of `events.jsonl` (docs/log.md#classification, and the first
 * steps of docs/log.md#rescan). It decides whether a line counts as an event and what it means for the turn
 * lifecycle, and it is deliberately cheap: only the envelope and `event.type` are looked at,
 * except for the five lifecycle types, which must also decode completely so a malformed
 * lifecycle record can never open, close or fake a turn (docs/log.md#classification).
 */
import { Result, Schema, SchemaIssue } from "effect"
import {
  decodeUtf8,
  exactJsonValue,
  exceedsJsonDepth,
  isJsonObject,
  MAX_JSON_DEPTH,
  parseJsonOrUndefined,
  trimWhitespace
} from "../internal/jsonText.ts"
import { decodeLifecycleFast } from "./FastDecode.ts"
import type { LifecycleKind } from "./LifecycleKind.ts"
import { lifecycleKindOf } from "./LifecycleKind.ts"
import type { VersionedThreadEvent } from "./ThreadEvent.ts"
import { decodeEnvelope, EVENT_SCHEMA_VERSION } from "./ThreadEvent.ts"

/**
 * What the scan does with a line: `Skip` it (not counted, no lifecycle effect), or count it
 * with its raw event `type` and lifecycle kind. For lifecycle lines (`lifecycle !== "other"`)
 * the fully decoded `envelope` comes along, so callers can read recorded timestamps
 * (turn-index `ts`) without parsing the line again; other lines never carry it.
 */
export type LineClass =
  | { readonly _tag: "Skip" }
  | {
    readonly _tag: "Counted"
    readonly type: string
    readonly lifecycle: LifecycleKind
    readonly envelope?: VersionedThreadEvent
  }

const SKIP: LineClass = { _tag: "Skip" }

const tooDeepError = (): Schema.SchemaError =>
  new Schema.SchemaError(
    new SchemaIssue.InvalidValue({ message: `Expected JSON nested at most ${MAX_JSON_DEPTH} levels deep` })
  )

/**
 * Classifies one line (bytes as read from the file, or already-decoded text; with or without
 * its `\n`). Steps: strict UTF-8 (invalid → Skip); trim Unicode whitespace (empty → Skip);
 * parse JSON and require an object whose `schema_version` is a string and whose `event` is an
 * object with a string `type` (else Skip); a lifecycle type must also fully decode as a
 * `VersionedThreadEvent`, `turn.completed` must carry `usage` as a JSON object, and the line must not
 * nest deeper than `MAX_JSON_DEPTH`, which the full readers refuse (else Skip). Everything else is Counted as `other` without decoding the payload. Never throws.
 */
export const classifyLine = (line: Uint8Array | string): LineClass => classifyWithValue(line).cls

/** A line's class, and for a Counted line without its envelope, the trimmed text and its parsed JSON. */
export interface Classified {
  readonly cls: LineClass
  readonly text?: string
  readonly value?: unknown
}

const SKIPPED: Classified = { cls: SKIP }

/**
 * {@link classifyLine}, plus, for a Counted line whose class carries no envelope, the trimmed
 * text and its plain `JSON.parse` value: for readers that decode only some lines themselves (the
 * search build's `decodeTextEventFast`) and must not parse any line twice.
 */
export const classifyWithValue = (line: Uint8Array | string): Classified => {
  const text = typeof line === "string" ? line : decodeUtf8(line)
  if (text === undefined) return SKIPPED
  const trimmed = trimWhitespace(text)
  if (trimmed.length === 0) return SKIPPED
  const value = parseJsonOrUndefined(trimmed)
  if (!isJsonObject(value) || typeof value.schema_version !== "string") return SKIPPED
  const event = value.event
  if (!isJsonObject(event)) return SKIPPED
  const type = event.type
  if (typeof type !== "string") return SKIPPED
  const lifecycle = lifecycleKindOf(type)
  if (lifecycle === "other") return { cls: { _tag: "Counted", type, lifecycle }, text: trimmed, value }
  // The reference re-checks the raw shape of `usage`: a lenient decoder must not let an array
  // or null stand in for the usage object of a turn boundary.
  if (lifecycle === "turn_completed" && !isJsonObject(event.usage)) return SKIPPED
  // What the readers cannot decode (JSON nested too deep for them) must not open or close a turn.
  if (exceedsJsonDepth(trimmed)) return SKIPPED
  // The common shapes decode without the Schema (the fast decoder refuses every number the exact
  // parse could read differently); full decoding sees u64 literals beyond u64's maximum as such
  // (rejected), like `decodeLineText`.
  const fast = decodeLifecycleFast(value)
  const decoded = fast !== undefined ? Result.succeed(fast) : decodeEnvelope(exactJsonValue(trimmed, value))
  return { cls: Result.isSuccess(decoded) ? { _tag: "Counted", type, lifecycle, envelope: decoded.success } : SKIP }
}

// What `JSON.stringify({ schema_version: EVENT_SCHEMA_VERSION, event: { type, … } })` starts with.
const ENCODED_HEAD = `{"schema_version":${JSON.stringify(EVENT_SCHEMA_VERSION)},"event":{"type":"`

/**
 * {@link classifyLine} of a line the append path just produced with `JSON.stringify`, with the same
 * result at a fraction of the cost for the common case: a line that starts with the canonical head
 * and whose plain (escape-free) `type` is not a lifecycle type is Counted as `other` without a parse
 * — a stringified object has no duplicate keys and no surrounding whitespace, so that head alone
 * proves it an object with a string `schema_version` and an `event` object with that string `type`.
 * Every other line (lifecycle types, escapes, another head) goes through {@link classifyLine}.
 * `expectedType`, the type the caller encoded, only makes the check cheaper; the result is the same.
 *
 * **Gotchas**: only for text `JSON.stringify` produced; for anything read from a file use {@link classifyLine}.
 */
export const classifyEncodedLine = (line: string, expectedType?: string): LineClass => {
  if (line.startsWith(ENCODED_HEAD)) {
    // The append path knows the type it encoded: checking for it in place spares the slice.
    if (
      expectedType !== undefined && lifecycleKindOf(expectedType) === "other" &&
      line.startsWith(expectedType, ENCODED_HEAD.length) &&
      line.charCodeAt(ENCODED_HEAD.length + expectedType.length) === 34 && !expectedType.includes("\\") &&
      !expectedType.includes("\"")
    ) {
      return { _tag: "Counted", type: expectedType, lifecycle: "other" }
    }
    const end = line.indexOf("\"", ENCODED_HEAD.length)
    if (end !== -1) {
      const type = line.slice(ENCODED_HEAD.length, end)
      if (!type.includes("\\")) {
        const lifecycle = lifecycleKindOf(type)
        if (lifecycle === "other") return { _tag: "Counted", type, lifecycle }
      }
    }
  }
  return classifyLine(line)
}

/**
 * Why {@link classifyLine} skips `line`, naming the field at fault (`event`, `event.type`,
 * `event.usage`, or the path of the first decode error); undefined when the line is Counted.
 * For error messages only: it parses the line again.
 */
export const skipReason = (line: Uint8Array | string): string | undefined => {
  if (classifyLine(line)._tag === "Counted") return undefined
  const text = typeof line === "string" ? line : decodeUtf8(line)
  if (text === undefined) return "the line is not valid UTF-8"
  const trimmed = trimWhitespace(text)
  if (trimmed.length === 0) return "the line is empty"
  const value = parseJsonOrUndefined(trimmed)
  if (!isJsonObject(value)) return "the line is not a JSON object"
  if (typeof value.schema_version !== "string") return "schema_version: expected a string"
  const event = value.event
  if (!isJsonObject(event)) return "event: missing or not an object"
  if (typeof event.type !== "string") return "event.type: missing or not a string"
  if (lifecycleKindOf(event.type) === "turn_completed" && !isJsonObject(event.usage)) {
    return "event.usage: a turn.completed needs a usage object"
  }
  if (exceedsJsonDepth(trimmed)) return `the line is JSON nested deeper than ${MAX_JSON_DEPTH} levels`
  const decoded = decodeEnvelope(exactJsonValue(trimmed, value))
  return Result.isFailure(decoded) ? decoded.failure.message : "the line does not decode"
}

/**
 * {@link classifyLine}, and for a Counted line whose class carries no envelope, its full decoding
 * (what `decodeLineText` of the line gives) made from the JSON value parsed to classify it, so a
 * reader that needs every event parses each line once.
 */
export const classifyAndDecodeLine = (line: Uint8Array | string): {
  readonly cls: LineClass
  readonly decoded: Result.Result<VersionedThreadEvent, Schema.SchemaError> | undefined
} => {
  const classified = classifyWithValue(line)
  return { cls: classified.cls, decoded: decodeClassified(classified) }
}

/**
 * The full decoding of a line {@link classifyWithValue} classified, as {@link classifyAndDecodeLine}
 * gives it: `undefined` when the class carries its envelope (or the line is skipped), else the
 * Schema's decoding of the exact JSON value.
 */
export const decodeClassified = (
  classified: Classified
): Result.Result<VersionedThreadEvent, Schema.SchemaError> | undefined => {
  const { text, value } = classified
  // A line nested too deep for the recursive readers is undecodable (it still counts in the scan).
  return text === undefined
    ? undefined
    : exceedsJsonDepth(text)
    ? Result.fail(tooDeepError())
    : decodeEnvelope(exactJsonValue(text, value))
}

/**
 * The JSON text of a raw line under the scan's rules — strict UTF-8, then Unicode
 * White_Space trimmed as Rust's `str::trim` does — or undefined when the bytes are not valid
 * UTF-8. Readers that fully decode lines (turn reconstruction, eviction summaries) use it so
 * they accept and reject exactly the lines the scan does.
 */
export const scanLineText = (line: Uint8Array | string): string | undefined => {
  const text = typeof line === "string" ? line : decodeUtf8(line)
  return text === undefined ? undefined : trimWhitespace(text)
}

// `"matrix.updated"` as bytes; its `.` (index 7) anchors the search, being rarer than `"`.
const MATRIX_TYPE = [34, 109, 97, 116, 114, 105, 120, 46, 117, 112, 100, 97, 116, 101, 100, 34]
const MATRIX_DOT = 7

const matrixTypeAt = (bytes: Uint8Array, at: number): boolean => {
  if (at < 0 || at + MATRIX_TYPE.length > bytes.length) return false
  for (let i = 0; i < MATRIX_TYPE.length; i++) {
    if (bytes[at + i] !== MATRIX_TYPE[i]) return false
  }
  return true
}

/**
 * A cheap byte pre-filter for matrix checkpoints: false only when the raw line cannot hold a
 * `matrix.updated` record. A JSON string equal to `matrix.updated` is written either literally
 * or with `\u` escapes (none of its characters has a short escape), so a line containing
 * neither `"matrix.updated"` nor `\u` cannot hold one and need not be classified or decoded.
 */
export const mayHoldMatrixCheckpoint = (bytes: Uint8Array): boolean => {
  for (let i = bytes.indexOf(46, MATRIX_DOT); i !== -1; i = bytes.indexOf(46, i + 1)) {
    if (matrixTypeAt(bytes, i - MATRIX_DOT)) return true
  }
  for (let i = bytes.indexOf(92); i !== -1; i = bytes.indexOf(92, i + 1)) {
    if (bytes[i + 1] === 117) return true
  }
  return false
}
