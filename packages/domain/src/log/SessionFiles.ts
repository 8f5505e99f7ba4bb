/**
 * Schemas and canonical encoders for the per-session metadata files (docs/format.md#manifest, docs/format.md#cap-marker):
 * `manifest.json`, `index/turns.json` and `index/pending-cap-rewrite.json`. They are
 * wire-compatible with the reference store: the encoders write compact JSON with keys in
 * the spec's declaration order and omit absent optional keys, so the same value always
 * yields the same bytes; the decoders ignore unknown keys and never throw.
 */
import { Result, Schema } from "effect"
import { isJsonObject, parseJsonOrUndefined } from "../internal/jsonText.ts"
import type { TurnTable } from "./TurnTable.ts"
import { asTurnTable, entryAt } from "./TurnTable.ts"

/** The manifest's `schema_version` written by this store (`SESSION_STORE_SCHEMA_VERSION`, docs/log.md#constants). */
export const SESSION_STORE_SCHEMA_VERSION = 1

/** Counters and byte offsets are u64 on the wire; here they are non-negative safe integers. */
const Count = Schema.Natural

/** Whether a session may still receive turns (`active`) or saw `thread.completed` (`completed`). */
export const SessionStatus = Schema.Literals(["active", "completed"])

/** The session status, see {@link SessionStatus}. */
export type SessionStatus = typeof SessionStatus.Type

/**
 * `manifest.json` (docs/format.md#manifest). `session_id` is the raw, unsanitised id; `turn_count` is the
 * ordinal of the last closed turn; the three optional keys are absent in manifests written by
 * older reference versions, which merely refuses the open fast path.
 */
export const Manifest = Schema.Struct({
  session_id: Schema.String,
  schema_version: Count,
  created_at: Schema.String,
  updated_at: Schema.String,
  turn_count: Count,
  event_count: Count,
  status: SessionStatus,
  in_turn: Schema.optionalKey(Schema.Boolean),
  persisted_file_len: Schema.optionalKey(Count),
  retained_turn_base: Schema.optionalKey(Count)
})

/** A decoded manifest, see {@link Manifest}. */
export type Manifest = typeof Manifest.Type

/**
 * One turn of `index/turns.json` (docs/format.md#turn-index): the byte span `[start_offset, end_offset)` from
 * the turn's `turn.started` line to just past its last attributed line, the number of records
 * attributed to it and the entry's creation time.
 */
export const TurnEntry = Schema.Struct({
  turn_number: Count,
  start_offset: Count,
  end_offset: Count,
  event_count: Count,
  ts: Schema.String
})

/** A decoded turn entry, see {@link TurnEntry}. */
export type TurnEntry = typeof TurnEntry.Type

/** The whole `index/turns.json` document: entries ordered by `turn_number`. */
export const TurnIndexFile = Schema.Struct({
  entries: Schema.Array(TurnEntry)
})

/** A decoded turn index document, see {@link TurnIndexFile}. */
export type TurnIndexFile = typeof TurnIndexFile.Type

/**
 * The cap-rewrite intent marker `index/pending-cap-rewrite.json` (docs/format.md#cap-marker). `checkpoint_bytes`
 * is our additive field (docs/differences.md#turn-base): the size of the matrix-checkpoint prefix the rewrite
 * put in front of the retained suffix; reference markers lack it and stay readable.
 */
export const PendingCapRewrite = Schema.Struct({
  previous_file_len: Count,
  new_file_len: Count,
  retained_turn_base: Count,
  checkpoint_bytes: Schema.optionalKey(Count)
})

/** A decoded cap-rewrite marker, see {@link PendingCapRewrite}. */
export type PendingCapRewrite = typeof PendingCapRewrite.Type

/**
 * The manifest of a brand-new session: no turns, no events, `active`, nothing persisted yet and
 * the first retained turn is 1 (docs/format.md#manifest).
 */
export const initialManifest = (sessionId: string, now: string): Manifest => ({
  session_id: sessionId,
  schema_version: SESSION_STORE_SCHEMA_VERSION,
  created_at: now,
  updated_at: now,
  turn_count: 0,
  event_count: 0,
  status: "active",
  in_turn: false,
  persisted_file_len: 0,
  retained_turn_base: 1
})

/**
 * Canonical `manifest.json` bytes: compact JSON, keys in declaration order, absent optional
 * keys omitted. Built field by field rather than through the Schema encoder so that excess
 * properties of a structurally wider value can never leak into the file.
 */
export const encodeManifest = (m: Manifest): string =>
  JSON.stringify({
    session_id: m.session_id,
    schema_version: m.schema_version,
    created_at: m.created_at,
    updated_at: m.updated_at,
    turn_count: m.turn_count,
    event_count: m.event_count,
    status: m.status,
    ...(m.in_turn === undefined ? {} : { in_turn: m.in_turn }),
    ...(m.persisted_file_len === undefined ? {} : { persisted_file_len: m.persisted_file_len }),
    ...(m.retained_turn_base === undefined ? {} : { retained_turn_base: m.retained_turn_base })
  })

/** One turn entry as its JSON object, keys in the canonical order of `index/turns.json`. */
export const turnEntryJson = (e: TurnEntry) => ({
  turn_number: e.turn_number,
  start_offset: e.start_offset,
  end_offset: e.end_offset,
  event_count: e.event_count,
  ts: e.ts
})

/**
 * Canonical `index/turns.json` bytes for the given entries (`{"entries":[…]}`, compact, keys in
 * order); an array of entries or a table of them (the writer's columns).
 */
export const encodeTurnIndex = (entries: ReadonlyArray<TurnEntry> | TurnTable): string =>
  [...encodeTurnIndexChunks(entries, Number.MAX_SAFE_INTEGER)].join("")

/**
 * The same bytes as {@link encodeTurnIndex}, as a sequence of text chunks of at most `perChunk`
 * entries, so a large index can be written without building one string of all of it.
 */
export function* encodeTurnIndexChunks(
  entries: ReadonlyArray<TurnEntry> | TurnTable,
  perChunk = 4096
): Generator<string> {
  const table = asTurnTable(entries)
  const size = Math.max(1, Math.floor(perChunk))
  yield "{\"entries\":["
  for (let i = 0; i < table.length; i += size) {
    const end = Math.min(i + size, table.length)
    const parts: Array<string> = new Array(end - i)
    for (let k = i; k < end; k++) parts[k - i] = JSON.stringify(turnEntryJson(entryAt(table, k)))
    const body = parts.join(",")
    yield i === 0 ? body : "," + body
  }
  yield "]}"
}

/** Canonical `index/pending-cap-rewrite.json` bytes; `checkpoint_bytes` is written only when present. */
export const encodePendingCapRewrite = (m: PendingCapRewrite): string =>
  JSON.stringify({
    previous_file_len: m.previous_file_len,
    new_file_len: m.new_file_len,
    retained_turn_base: m.retained_turn_base,
    ...(m.checkpoint_bytes === undefined ? {} : { checkpoint_bytes: m.checkpoint_bytes })
  })

const decodeManifestJson = Schema.decodeUnknownResult(Schema.fromJsonString(Manifest))
const decodeTurnIndexJson = Schema.decodeUnknownResult(Schema.fromJsonString(TurnIndexFile))
const decodePendingCapRewriteJson = Schema.decodeUnknownResult(Schema.fromJsonString(PendingCapRewrite))

/**
 * Decodes `manifest.json` text. Invalid JSON, a missing required field or a wrongly typed field
 * is a failure (the store treats it as "malformed" and rescans); unknown keys are dropped.
 */
export const decodeManifestText = (text: string): Result.Result<Manifest, Schema.SchemaError> =>
  decodeManifestJson(text)

/**
 * Decodes `index/turns.json` text to its entries (the same shape {@link encodeTurnIndex} takes).
 * Only the shape is checked here; whether the entries describe the log is
 * `isIndexValid` / `isIndexConsistent`'s job.
 */
export const decodeTurnIndexText = (text: string): Result.Result<ReadonlyArray<TurnEntry>, Schema.SchemaError> => {
  const fast = fastTurnEntries(text)
  return fast !== undefined ? Result.succeed(fast) : Result.map(decodeTurnIndexJson(text), (file) => file.entries)
}

const isCount = (u: unknown): u is number => typeof u === "number" && Number.isSafeInteger(u) && u >= 0

/**
 * The common case without the Schema interpreter: the index is read on every open and can hold
 * a hundred thousand entries (bench P3). Accepts exactly what `TurnIndexFile` accepts (it is
 * property-tested against it) and returns undefined otherwise, so the Schema reports the error.
 */
const fastTurnEntries = (text: string): ReadonlyArray<TurnEntry> | undefined => {
  const parsed = parseJsonOrUndefined(text)
  if (!isJsonObject(parsed)) return undefined
  const entries = parsed.entries
  if (!Array.isArray(entries)) return undefined
  const out: Array<TurnEntry> = new Array(entries.length)
  for (let i = 0; i < entries.length; i++) {
    const e: unknown = entries[i]
    if (!isJsonObject(e)) return undefined
    const { end_offset, event_count, start_offset, ts, turn_number } = e
    if (
      !isCount(turn_number) || !isCount(start_offset) || !isCount(end_offset) || !isCount(event_count) ||
      typeof ts !== "string"
    ) return undefined
    out[i] = { turn_number, start_offset, end_offset, event_count, ts }
  }
  return out
}

/** Decodes `index/pending-cap-rewrite.json` text; the store treats a failure as "no marker" (docs/format.md#cap-marker). */
export const decodePendingCapRewriteText = (text: string): Result.Result<PendingCapRewrite, Schema.SchemaError> =>
  decodePendingCapRewriteJson(text)

/**
 * How many turns cap eviction has removed from the front of the log:
 * `max(retained_turn_base ?? 1, 1) − 1` (docs/format.md#manifest).
 */
export const evictedTurnCount = (m: Manifest): number => Math.max(m.retained_turn_base ?? 1, 1) - 1
