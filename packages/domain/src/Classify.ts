/**
 * Scan-time classification of one raw line of `events.jsonl` (docs/log.md#classification, and the first
 * steps of docs/log.md#rescan). It decides whether a line counts as an event and what it means for the turn
 * lifecycle, and it is deliberately cheap: only the envelope and `event.type` are looked at,
 * except for the five lifecycle types, which must also decode completely so a malformed
 * lifecycle record can never open, close or fake a turn (docs/log.md#classification).
 */
import { Result } from "effect"
import { decodeUtf8, isJsonObject, parseJsonOrUndefined, trimWhitespace } from "./internal/jsonText.ts"
import type { LifecycleKind } from "./LifecycleKind.ts"
import { lifecycleKindOf } from "./LifecycleKind.ts"
import type { VersionedThreadEvent } from "./ThreadEvent.ts"
import { decodeEnvelope } from "./ThreadEvent.ts"

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

/**
 * Classifies one line (bytes as read from the file, or already-decoded text; with or without
 * its `\n`). Steps: strict UTF-8 (invalid → Skip); trim Unicode whitespace (empty → Skip);
 * parse JSON and require an object whose `schema_version` is a string and whose `event` is an
 * object with a string `type` (else Skip); a lifecycle type must also fully decode as a
 * `VersionedThreadEvent`, and `turn.completed` must carry `usage` as a JSON object (else
 * Skip). Everything else is Counted as `other` without decoding the payload. Never throws.
 */
export const classifyLine = (line: Uint8Array | string): LineClass => {
  const text = typeof line === "string" ? line : decodeUtf8(line)
  if (text === undefined) return SKIP
  const trimmed = trimWhitespace(text)
  if (trimmed.length === 0) return SKIP
  const value = parseJsonOrUndefined(trimmed)
  if (!isJsonObject(value) || typeof value.schema_version !== "string") return SKIP
  const event = value.event
  if (!isJsonObject(event)) return SKIP
  const type = event.type
  if (typeof type !== "string") return SKIP
  const lifecycle = lifecycleKindOf(type)
  if (lifecycle === "other") return { _tag: "Counted", type, lifecycle }
  // The reference re-checks the raw shape of `usage`: a lenient decoder must not let an array
  // or null stand in for the usage object of a turn boundary.
  if (lifecycle === "turn_completed" && !isJsonObject(event.usage)) return SKIP
  const decoded = decodeEnvelope(value)
  return Result.isSuccess(decoded) ? { _tag: "Counted", type, lifecycle, envelope: decoded.success } : SKIP
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
