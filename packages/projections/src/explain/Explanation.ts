/**
 * Explanations of a session, read-only (docs/explain.md): one streamed pass over the retained
 * lines of `events.jsonl`, each line parsed, folded with domain's explanation reducer and
 * dropped, while a running SHA-256 over the consumed bytes gives the model's `revision`.
 *
 * Beyond a one-shot query, an {@link Explainer} keeps the fold, the running hash and the byte
 * offset it reached in memory (never on disk): explaining again after new appends reads only the
 * new bytes. A log that became shorter, or whose last consumed line changed (a cap rewrite
 * replaced the file with a suffix of itself), is read again from the start.
 *
 * **Gotchas**: a final line without its `\n` is a write in progress (or a torn tail): it is not
 * consumed, not hashed and not explained until its newline arrives, so a model never depends on
 * half a record. Nothing here takes the session lock, so reading never blocks a writer.
 */
import type {
  ExplanationFold,
  ExplanationModel,
  ExplanationRecord,
  ExplanationScope,
  Transcript
} from "@logbook/domain"
import { makeExplanationFold, makeTranscriptFold, scanLineText } from "@logbook/domain"
import type { RawLine, StoreIoError } from "@logbook/store"
import { makeLineSplitter, SessionFs, sha256Hex } from "@logbook/store"
import { Effect, Option, Predicate, Result, Semaphore, Stream } from "effect"
import type { Hash } from "node:crypto"
import { createHash } from "node:crypto"
import { inspectSession } from "../session/Inspection.ts"
import type { SessionNotFound } from "../session/SessionLookup.ts"
import { findSession } from "../session/SessionLookup.ts"

type JsonObject = { readonly [key: string]: unknown }

const parse = (text: string): unknown => JSON.parse(text)

/** The parsed `event` object of a line, or `undefined` when the line is not a valid envelope. */
const eventOf = (bytes: Uint8Array): JsonObject | undefined => {
  const text = scanLineText(bytes)
  if (text === undefined || text.length === 0) return undefined
  const parsed = Result.try(() => parse(text))
  if (Result.isFailure(parsed)) return undefined
  const value = parsed.success
  if (!Predicate.isReadonlyObject(value) || typeof value.schema_version !== "string") return undefined
  const event = value.event
  return Predicate.isReadonlyObject(event) && typeof event.type === "string" ? event : undefined
}

const isBlank = (bytes: Uint8Array): boolean => {
  for (const b of bytes) if (b !== 10 && b !== 13 && b !== 32 && b !== 9) return false
  return true
}

/** The record the domain fold takes for one raw line (its digest computed only if asked for). */
export const explanationRecordOf = (line: RawLine): ExplanationRecord => {
  let digest: string | undefined
  return {
    offset: line.offset,
    length: line.bytes.length,
    digest: () => (digest ??= sha256Hex(line.bytes)),
    event: eventOf(line.bytes)
  }
}

interface Progress {
  readonly fold: ExplanationFold
  readonly hash: Hash
  /** Bytes consumed: every complete line before this offset is folded and hashed. */
  offset: number
  /** The last consumed line, to notice a rewrite of the file under us. */
  last: { readonly offset: number; readonly digest: string } | undefined
}

const fresh = (sessionId: string): Progress => ({
  fold: makeExplanationFold(sessionId),
  hash: createHash("sha256"),
  offset: 0,
  last: undefined
})

/** A long-lived explainer of one session: see the module comment. */
export interface Explainer {
  /** The model of the retained log as it is now, reading only bytes not read before. */
  readonly explain: (
    scope: ExplanationScope
  ) => Effect.Effect<ExplanationModel, StoreIoError | SessionNotFound, SessionFs>
  /** Bytes read from the log by this explainer so far (for tests and the bench). */
  readonly bytesRead: () => number
}

/**
 * An {@link Explainer} for an existing session (fails `SessionNotFound` when there is none).
 * Its state lives in memory for as long as the caller keeps it.
 */
export const makeExplainer = Effect.fn("Explanation.makeExplainer")(function*(sessionsDir: string, sessionId: string) {
  const paths = yield* findSession(sessionsDir, sessionId)
  const lock = yield* Semaphore.make(1)
  let progress: Progress | undefined
  let bytesRead = 0

  const catchUp = (p: Progress, end: number) =>
    Effect.gen(function*() {
      const fs = yield* SessionFs
      if (end <= p.offset) return
      const splitter = makeLineSplitter(p.offset)
      const consume = (lines: ReadonlyArray<RawLine>) => {
        for (const line of lines) {
          p.offset = line.offset + line.bytes.length
          if (isBlank(line.bytes)) continue
          const record = explanationRecordOf(line)
          p.fold.add(record)
          lastLine = { offset: line.offset, record }
        }
      }
      let lastLine: { readonly offset: number; readonly record: ExplanationRecord } | undefined
      let pending: Array<Uint8Array> = []
      yield* fs.stream(paths.events, { start: p.offset, end }).pipe(
        Stream.runForEach((chunk) =>
          Effect.sync(() => {
            bytesRead += chunk.length
            // The running hash takes whole chunks up to their last newline (one call per chunk, not
            // per line); bytes after it wait until a later newline completes their line.
            const nl = chunk.lastIndexOf(10)
            if (nl !== -1) {
              for (const part of pending) p.hash.update(part)
              pending = []
              p.hash.update(chunk.subarray(0, nl + 1))
              if (nl + 1 < chunk.length) pending.push(chunk.slice(nl + 1))
            } else {
              pending.push(chunk.slice())
            }
            consume(splitter.push(chunk))
          })
        )
      )
      // The unterminated remainder (if any) stays unread until its newline arrives.
      // Only the last consumed line's digest is kept, to notice a rewrite next time.
      const lastConsumed: { readonly offset: number; readonly record: ExplanationRecord } | undefined = lastLine
      if (lastConsumed !== undefined) p.last = { offset: lastConsumed.offset, digest: lastConsumed.record.digest() }
    })

  const stillPrefix = (p: Progress, size: number) =>
    Effect.gen(function*() {
      if (size < p.offset) return false
      if (p.last === undefined) return true
      const fs = yield* SessionFs
      const bytes = yield* fs.readRange(paths.events, p.last.offset, p.offset)
      bytesRead += bytes.length
      return sha256Hex(bytes) === p.last.digest
    })

  const explain = (scope: ExplanationScope) =>
    lock.withPermit(Effect.gen(function*() {
      const fs = yield* SessionFs
      const inspection = yield* inspectSession(sessionsDir, sessionId)
      const manifest = inspection.effectiveManifest
      const info = yield* fs.lstat(paths.events)
      const size = Option.isSome(info) && info.value.type === "File" ? info.value.size : 0
      let p = progress ?? fresh(manifest.session_id)
      if (!(yield* stillPrefix(p, size))) p = fresh(manifest.session_id)
      progress = p
      yield* catchUp(p, size)
      const evictedTurns = Math.max(0, (manifest.retained_turn_base ?? 1) - 1)
      return p.fold.model({ scope, revision: p.hash.copy().digest("hex"), evictedTurns })
    }))

  return { explain, bytesRead: () => bytesRead } satisfies Explainer
})

/**
 * The explanation of a session (or of its latest task) as the retained log is now: one streamed
 * pass, nothing persisted. Fails `SessionNotFound` for a missing session.
 */
export const queryExplanation = Effect.fn("Explanation.queryExplanation")(
  function*(sessionsDir: string, sessionId: string, scope: ExplanationScope = "task") {
    const explainer = yield* makeExplainer(sessionsDir, sessionId)
    return yield* explainer.explain(scope)
  }
)

/**
 * The transcript of a session's retained log (for the HTML report): one streamed pass, each line
 * folded by domain's transcript reducer and dropped; its texts are bounded there, so memory stays
 * bounded however long the log is. Fails `SessionNotFound` for a missing session.
 */
export const queryTranscript = Effect.fn("Explanation.queryTranscript")(
  function*(sessionsDir: string, sessionId: string) {
    const paths = yield* findSession(sessionsDir, sessionId)
    const fs = yield* SessionFs
    const fold = makeTranscriptFold()
    const splitter = makeLineSplitter(0)
    yield* fs.stream(paths.events).pipe(
      Stream.runForEach((chunk) =>
        Effect.sync(() => {
          for (const line of splitter.push(chunk)) if (!isBlank(line.bytes)) fold.add(explanationRecordOf(line))
        })
      )
    )
    return fold.transcript() satisfies Transcript
  }
)
