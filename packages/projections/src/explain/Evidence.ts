/**
 * Evidence behind an explanation (docs/explain.md#evidence): re-reads exactly the line an
 * evidence reference names — same session, same byte offset, same SHA-256 (and length when
 * given) — redacts it and pages the pretty-printed JSON. A reference that no longer matches
 * (the line changed, was evicted, or never existed) is an error, never an empty success.
 */
import { redactJson } from "@logbook/domain"
import { SessionFs, sha256Hex } from "@logbook/store"
import { Effect, Option, Result, Schema } from "effect"
import { inspectSession } from "../session/Inspection.ts"
import { findSession } from "../session/SessionLookup.ts"

/** Bound of one evidence page (bytes of pretty-printed, redacted JSON). */
export const MAX_EVIDENCE_PAGE = 32 * 1024

/** The shortest digest prefix a query may give (hex digits; the full digest has 64). */
export const MIN_DIGEST_PREFIX = 12

/** Longest line an evidence read will look at (a reference to a longer one is unavailable). */
export const MAX_EVIDENCE_LINE = 64 * 1024 * 1024

/** The line a reference names is unavailable, malformed, or expired. */
export class EvidenceUnavailable extends Schema.TaggedError<EvidenceUnavailable>()("EvidenceUnavailable", {
  session: Schema.String,
  offset: Schema.Number,
  reason: Schema.String
}) {
  override get message(): string {
    return `evidence at byte ${this.offset} of session ${this.session} is unavailable, malformed, or expired (${this.reason})`
  }
}

/** A reference recorded for another session. */
export class EvidenceForeignSession extends Schema.TaggedError<EvidenceForeignSession>()("EvidenceForeignSession", {
  session: Schema.String,
  referenced: Schema.String
}) {
  override get message(): string {
    return `evidence belongs to another session (${this.referenced}, not ${this.session})`
  }
}

/** A page offset that is past the end or inside a UTF-8 character. */
export class InvalidEvidencePage extends Schema.TaggedError<InvalidEvidencePage>()("InvalidEvidencePage", {
  offset: Schema.Number,
  totalBytes: Schema.Number
}) {
  override get message(): string {
    return `invalid evidence page offset ${this.offset} (the text has ${this.totalBytes} bytes; offsets must fall on a character boundary)`
  }
}

/** What an evidence query names: a line by offset and digest; session and length are checked when given. */
export interface EvidenceQuery {
  readonly sessionId?: string | undefined
  readonly offset: number
  readonly digest: string
  readonly length?: number | undefined
}

/** One page of redacted evidence text. */
export interface EvidencePage {
  readonly reference: {
    readonly session_id: string
    readonly offset: number
    readonly length: number
    readonly digest: string
  }
  readonly text: string
  readonly offset: number
  readonly next_offset: number | null
  readonly total_bytes: number
}

const isContinuation = (b: number | undefined) => b !== undefined && (b & 0xc0) === 0x80

/**
 * A page of `bytes` from `offset` (which must be ≤ the length and on a character boundary) of at
 * most `clamp(limit, 1, 32768)` bytes, ending on a character boundary; at least one whole
 * character when the limit is smaller than the character.
 */
export const pageUtf8 = (
  bytes: Uint8Array,
  offset: number,
  limit: number
): Result.Result<{ readonly start: number; readonly end: number }, InvalidEvidencePage> => {
  const total = bytes.length
  if (!Number.isInteger(offset) || offset < 0 || offset > total || isContinuation(bytes[offset])) {
    return Result.fail(new InvalidEvidencePage({ offset, totalBytes: total }))
  }
  const size = Math.min(Math.max(Math.floor(limit), 1), MAX_EVIDENCE_PAGE)
  let end = Math.min(offset + size, total)
  while (end > offset && end < total && isContinuation(bytes[end])) end--
  if (end === offset && offset < total) {
    end = offset + 1
    while (end < total && isContinuation(bytes[end])) end++
  }
  return Result.succeed({ start: offset, end })
}

const decoder = new TextDecoder()

const parseJson = (text: string): unknown => JSON.parse(text)

/**
 * Re-reads the line a reference names and returns one page of its redacted, pretty-printed
 * JSON. Fails `EvidenceForeignSession` when the reference names another session,
 * `EvidenceUnavailable` when no retained line has exactly that offset (line start), length and
 * digest (or a digest prefix of at least {@link MIN_DIGEST_PREFIX} hex digits) or when it is not JSON, and `InvalidEvidencePage` for a bad page offset.
 */
export const queryEvidence = Effect.fn("Evidence.queryEvidence")(
  function*(sessionsDir: string, sessionId: string, query: EvidenceQuery, pageOffset = 0, limit = MAX_EVIDENCE_PAGE) {
    const paths = yield* findSession(sessionsDir, sessionId)
    const inspection = yield* inspectSession(sessionsDir, sessionId)
    const recorded = inspection.effectiveManifest.session_id
    if (query.sessionId !== undefined && query.sessionId !== recorded && query.sessionId !== sessionId) {
      return yield* new EvidenceForeignSession({ session: recorded, referenced: query.sessionId })
    }
    const unavailable = (reason: string) =>
      new EvidenceUnavailable({ session: sessionId, offset: query.offset, reason })
    const fs = yield* SessionFs
    const info = yield* fs.lstat(paths.events)
    const size = Option.isSome(info) && info.value.type === "File" ? info.value.size : 0
    if (!Number.isSafeInteger(query.offset) || query.offset < 0 || query.offset >= size) {
      return yield* unavailable("no retained line starts there")
    }
    if (query.offset > 0) {
      const before = yield* fs.readRange(paths.events, query.offset - 1, query.offset)
      if (before[0] !== 10) return yield* unavailable("no retained line starts there")
    }
    // Read until the line's newline, in growing steps, bounded.
    let end = Math.min(size, query.offset + (query.length ?? 4096))
    let bytes = yield* fs.readRange(paths.events, query.offset, end)
    while (bytes.indexOf(10) === -1 && end < size && bytes.length < MAX_EVIDENCE_LINE) {
      end = Math.min(size, query.offset + bytes.length * 4)
      bytes = yield* fs.readRange(paths.events, query.offset, end)
    }
    const nl = bytes.indexOf(10)
    if (nl === -1) return yield* unavailable("the line is not terminated")
    const line = bytes.subarray(0, nl + 1)
    if (query.length !== undefined && line.length !== query.length) return yield* unavailable("the length differs")
    // A prefix of at least 12 hex digits is accepted (the short references of the plain-text
    // summary): the offset pins the line, 48 bits of digest still tell a changed one.
    const digest = sha256Hex(line)
    const wanted = query.digest.toLowerCase()
    if (wanted.length < MIN_DIGEST_PREFIX || !digest.startsWith(wanted)) return yield* unavailable("the digest differs")
    const parsed = Result.try(() => parseJson(decoder.decode(line)))
    if (Result.isFailure(parsed)) return yield* unavailable("the line is not JSON")
    const text = new TextEncoder().encode(JSON.stringify(redactJson(parsed.success), null, 2))
    const page = pageUtf8(text, pageOffset, limit)
    if (Result.isFailure(page)) return yield* page.failure
    const { end: pageEnd, start } = page.success
    return {
      reference: {
        session_id: recorded,
        offset: query.offset,
        length: line.length,
        digest
      },
      text: decoder.decode(text.subarray(start, pageEnd)),
      offset: start,
      next_offset: pageEnd < text.length ? pageEnd : null,
      total_bytes: text.length
    } satisfies EvidencePage
  }
)
